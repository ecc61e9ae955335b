// One language server per workspace folder that has a memory store (as Microsoft's
// multi-root LSP sample does): each folder has its own root, settings, folders and
// index, and the server stays single-root. Started, and stopped, as folders come and go.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { MemoryCatalog } from "./catalog";
import { currentServerSettings, MemoryServer, type ServerRole } from "./server";
import { memoryFolders } from "./settings";

/** A served workspace folder: its server and the memories it lists. */
export interface Served {
  folder: vscode.WorkspaceFolder | undefined;
  server: MemoryServer;
  catalog: MemoryCatalog;
}

function isDirectory(candidate: string): boolean {
  try {
    return fs.statSync(candidate).isDirectory();
  } catch {
    return false;
  }
}

function inside(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** The memory folders of a workspace folder's settings (primary, additional, global). */
function storeFolders(folder: vscode.WorkspaceFolder): string[] {
  return memoryFolders(currentServerSettings(folder), {
    root: folder.uri.fsPath,
    home: os.homedir(),
    env: process.env,
    isDirectory,
  }).map((memoryFolder) => memoryFolder.path);
}

/** Whether a folder holds a project file (memory-ls.toml, .memory-ls.toml, or a
 * pyproject.toml with a [tool.memory-ls] table): the store is defined there. */
function hasProjectFile(directory: string): boolean {
  if (["memory-ls.toml", ".memory-ls.toml"].some((name) => fs.existsSync(path.join(directory, name)))) {
    return true;
  }
  try {
    return /^\s*\[tool\.memory-ls[\].]/m.test(fs.readFileSync(path.join(directory, "pyproject.toml"), "utf8"));
  } catch {
    return false;
  }
}

/** Whether a workspace folder has a memory store: a project file in it, or its primary or
 * an additional folder exists. */
function hasStore(folder: vscode.WorkspaceFolder): boolean {
  const settings = currentServerSettings(folder);
  const own = memoryFolders(settings, { root: folder.uri.fsPath, home: os.homedir(), env: process.env, isDirectory })
    .filter((memoryFolder) => memoryFolder.kind !== "global")
    .map((memoryFolder) => memoryFolder.path);
  return (
    hasProjectFile(folder.uri.fsPath) ||
    own.some(isDirectory) ||
    isDirectory(path.join(folder.uri.fsPath, ".aicoder", "memory"))
  );
}

export class MemoryServers implements vscode.Disposable {
  private served: Served[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  private readonly subscription: vscode.Disposable;
  /** Fires when folders are served or no longer served. */
  readonly onDidChange = this.changeEmitter.event;

  constructor(private readonly extensionPath: string) {
    this.subscription = vscode.workspace.onDidChangeWorkspaceFolders(() => void this.update());
  }

  /** Every served folder, in workspace order (the first also serves files outside them). */
  get all(): readonly Served[] {
    return this.served;
  }

  /** The first served folder (the only one in a single-folder window). */
  get primary(): Served {
    const first = this.served[0];
    if (first === undefined) {
      throw new Error("memory-ls: no server has been started");
    }
    return first;
  }

  /** The folders to serve: those with a memory store, else the first (a new store goes there). */
  private wanted(): (vscode.WorkspaceFolder | undefined)[] {
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === "file");
    const withStore = folders.filter(hasStore);
    if (withStore.length > 0) {
      return withStore;
    }
    return [folders[0]];
  }

  /** Start servers for new folders, stop those of folders gone (roles are recomputed). */
  async update(): Promise<void> {
    const wanted = this.wanted();
    const key = (folder: vscode.WorkspaceFolder | undefined): string => folder?.uri.toString() ?? "";
    const roles = this.roles(wanted);
    const previous = this.served;
    const sameShape =
      previous.length === wanted.length && previous.every((entry, index) => key(entry.folder) === key(wanted[index]));
    if (sameShape) {
      return;
    }
    // Roles depend on every folder served: restart them all (a rare event).
    for (const entry of previous) {
      entry.catalog.dispose();
      entry.server.dispose();
    }
    this.served = wanted.map((folder, index) => {
      const label = index === 0 ? "Memory LS" : `Memory LS (${folder?.name ?? index})`;
      const server = new MemoryServer(this.extensionPath, folder, roles[index] as ServerRole, label);
      return { folder, server, catalog: new MemoryCatalog(server) };
    });
    this.changeEmitter.fire();
    await Promise.all(this.served.map((entry) => entry.server.start()));
  }

  private roles(wanted: (vscode.WorkspaceFolder | undefined)[]): ServerRole[] {
    if (wanted.length <= 1) {
      // One server takes every Markdown document, as a single-folder window always did.
      return [
        {
          documentSelector: [
            { scheme: "file", language: "markdown" },
            { scheme: "untitled", language: "markdown" },
            // Cursor's rules: Markdown with frontmatter, a language VS Code does not know.
            { scheme: "file", pattern: "**/*.mdc" },
          ],
          owns: () => true,
        },
      ];
    }
    const roots = wanted.map((folder) => folder?.uri.fsPath ?? "");
    return wanted.map((folder, index) => {
      const root = roots[index] ?? "";
      const patterns = [`${root}/**/*`];
      if (index === 0 && folder !== undefined) {
        // Memory folders outside every workspace folder (the global folder, shared team
        // folders) belong to the first server.
        for (const outside of storeFolders(folder)) {
          if (!roots.some((other) => inside(other, outside))) {
            patterns.push(`${outside}/**/*`);
          }
        }
      }
      return {
        documentSelector: [
          ...patterns.map((pattern) => ({ scheme: "file", language: "markdown", pattern })),
          ...patterns.map((pattern) => ({ scheme: "file", pattern: `${pattern}.mdc` })),
          ...(index === 0 ? [{ scheme: "untitled", language: "markdown" }] : []),
        ],
        owns: (uri: vscode.Uri) => {
          const mine = inside(root, uri.fsPath);
          // The first server also shows what lies outside every served folder.
          return mine || (index === 0 && !roots.some((other) => inside(other, uri.fsPath)));
        },
      };
    });
  }

  /** The served folder a file belongs to (the first for files outside them all). */
  forUri(uri: vscode.Uri): Served {
    const found = this.served.find((entry) => entry.folder !== undefined && inside(entry.folder.uri.fsPath, uri.fsPath));
    return found ?? this.primary;
  }

  /** The served folder for a palette command: the active editor's, else the one picked. */
  async choose(): Promise<Served | undefined> {
    if (this.served.length <= 1) {
      return this.primary;
    }
    const document = vscode.window.activeTextEditor?.document;
    if (document !== undefined && document.uri.scheme === "file") {
      const entry = this.served.find(
        (candidate) => candidate.folder !== undefined && inside(candidate.folder.uri.fsPath, document.uri.fsPath),
      );
      if (entry !== undefined) {
        return entry;
      }
    }
    const picked = await vscode.window.showQuickPick(
      this.served.map((entry) => ({ label: entry.folder?.name ?? "(no folder)", entry })),
      { title: "Which workspace folder's memories?", placeHolder: "Workspace folder" },
    );
    return picked?.entry;
  }

  async stop(): Promise<void> {
    await Promise.all(this.served.map((entry) => entry.server.stop()));
  }

  dispose(): void {
    this.subscription.dispose();
    for (const entry of this.served) {
      entry.catalog.dispose();
      entry.server.dispose();
    }
    this.served = [];
    this.changeEmitter.dispose();
  }
}
