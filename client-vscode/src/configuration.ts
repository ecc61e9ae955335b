// The project file (memory-ls.toml) in the editor: once a language server has the
// editor's settings (as it starts, after each change) and after a change of the file,
// ask it what is in effect (`memory.configuration`); say once when the editor's settings
// override the file, or offer a file to a workspace whose store is in its settings only;
// and the palette's "Show Configuration" and "Write Settings to memory-ls.toml"
// (`memory.writeProjectFile`).
import * as path from "node:path";
import * as vscode from "vscode";
import { describeConfiguration, dueNotice, overrideKeys, projectFileName } from "./projectConfig";
import type { ConfigurationResult } from "./protocol";
import { errorText, ServerCommandError } from "./server";
import type { MemoryServers, Served } from "./servers";
import { workspaceKeys } from "./settings";

/** The project file's names (project_file.py): a change to one may change the store. */
const PROJECT_FILE_GLOB = "{memory-ls.toml,.memory-ls.toml,pyproject.toml}";
// After a file change the server re-reads its configuration first.
const RECHECK_DELAY_MS = 1000;
// The server applies the settings it was sent as soon as it has them.
const SETTINGS_DELAY_MS = 500;
const OVERRIDES_DISMISSED = "memoryLs.notices.overridesDismissed";
const OFFER_DISMISSED = "memoryLs.notices.offerDismissed";
const SCHEME = "memory-ls-config";

const WRITE_SETTINGS = "Write Settings to memory-ls.toml";
const SHOW_CONFIGURATION = "Show Configuration";
const WRITE_FILE = "Write memory-ls.toml";
const DONT_SHOW_AGAIN = "Don't Show Again";

/** The session's notices of one workspace folder (by its URI). */
interface Shown {
  overrides: string | undefined;
  offered: boolean;
}

export function registerConfiguration(context: vscode.ExtensionContext, servers: MemoryServers): void {
  const shown = new Map<string, Shown>();
  const folderKey = (served: Served): string => served.folder?.uri.toString() ?? "";
  let following: vscode.Disposable[] = [];
  const timers = new Map<Served, NodeJS.Timeout>();

  const label = (served: Served): string | undefined =>
    servers.all.length > 1 ? (served.folder?.name ?? undefined) : undefined;

  /** Ask the server what is in effect; show the notice that is due, if any. */
  async function check(served: Served): Promise<void> {
    if (served.server.state.kind !== "running") {
      return;
    }
    let result: ConfigurationResult;
    try {
      result = await served.server.call("memory.configuration", {});
    } catch (error) {
      served.server.output.warn(`Asking the server for its configuration failed: ${errorText(error)}`);
      return;
    }
    served.server.output.info(
      `Configuration: project file ${result.projectFile ?? "none"}; editor settings ${result.editorKeys.join(", ") || "none"}; overriding the file: ${overrideKeys(result).join(", ") || "none"}${result.problem !== null ? `; problem: ${result.problem}` : ""}`,
    );
    follow(served, result);
    const config = vscode.workspace.getConfiguration("memoryLs", served.folder);
    const state = shown.get(folderKey(served)) ?? { overrides: undefined, offered: false };
    shown.set(folderKey(served), state);
    const notice = dueNotice(
      result,
      workspaceKeys((key) => config.inspect(key)),
      {
        shownOverrides: state.overrides,
        offered: state.offered,
        overridesDismissed: context.workspaceState.get<boolean>(OVERRIDES_DISMISSED, false),
        offerDismissed: context.workspaceState.get<boolean>(OFFER_DISMISSED, false),
      },
      label(served),
    );
    if (notice.kind === "overrides") {
      state.overrides = notice.key;
      const choice = await vscode.window.showInformationMessage(
        notice.message,
        WRITE_SETTINGS,
        SHOW_CONFIGURATION,
        DONT_SHOW_AGAIN,
      );
      if (choice === WRITE_SETTINGS) {
        await writeProjectFile(served);
      } else if (choice === SHOW_CONFIGURATION) {
        await showConfiguration();
      } else if (choice === DONT_SHOW_AGAIN) {
        await context.workspaceState.update(OVERRIDES_DISMISSED, true);
      }
    } else if (notice.kind === "offer") {
      state.offered = true;
      const choice = await vscode.window.showInformationMessage(notice.message, WRITE_FILE, DONT_SHOW_AGAIN);
      if (choice === WRITE_FILE) {
        await writeProjectFile(served);
      } else if (choice === DONT_SHOW_AGAIN) {
        await context.workspaceState.update(OFFER_DISMISSED, true);
      }
    }
  }

  function checkSoon(served: Served, delay = RECHECK_DELAY_MS): void {
    clearTimeout(timers.get(served));
    timers.set(
      served,
      setTimeout(() => {
        timers.delete(served);
        check(served).catch((error: unknown) =>
          served.server.output.warn(`Checking the configuration failed: ${errorText(error)}`),
        );
      }, delay),
    );
  }

  // The watchers of the project file's names, per served folder: the folder itself, and
  // the directory of the file in effect when it lies above it.
  const watchers = new Map<Served, { directories: string; disposables: vscode.Disposable[] }>();

  /** Watch where the project file is or would be; give the catalog the store's folders. */
  function follow(served: Served, result: ConfigurationResult): void {
    served.catalog.setStoreFolders(result);
    const directories = new Set<string>();
    if (served.folder?.uri.scheme === "file") {
      directories.add(served.folder.uri.fsPath);
    }
    if (result.projectFile !== null) {
      directories.add(path.dirname(result.projectFile));
    }
    const key = [...directories].sort().join("\n");
    const previous = watchers.get(served);
    if (previous?.directories === key) {
      return;
    }
    previous?.disposables.forEach((disposable) => disposable.dispose());
    const disposables = [...directories].map((directory) => {
      const watcher = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(vscode.Uri.file(directory), PROJECT_FILE_GLOB),
      );
      const changed = (): void => {
        served.catalog.reload(RECHECK_DELAY_MS);
        checkSoon(served);
      };
      watcher.onDidCreate(changed);
      watcher.onDidChange(changed);
      watcher.onDidDelete(changed);
      return watcher;
    });
    watchers.set(served, { directories: key, disposables });
  }

  function followServers(): void {
    for (const disposable of following) {
      disposable.dispose();
    }
    for (const [served, entry] of watchers) {
      if (!servers.all.includes(served)) {
        entry.disposables.forEach((disposable) => disposable.dispose());
        watchers.delete(served);
      }
    }
    // The server asks for the editor's settings as it starts and after each change of
    // them: the configuration in effect is known once it has applied them.
    following = servers.all.map((served) =>
      served.server.onDidSendSettings(() => checkSoon(served, SETTINGS_DELAY_MS)),
    );
    for (const served of servers.all) {
      if (served.server.state.kind === "running") {
        checkSoon(served, 0);
      }
    }
  }

  // ----- Show Configuration: a read-only document ------------------------------------

  const documentChanged = new vscode.EventEmitter<vscode.Uri>();
  const documentUri = vscode.Uri.from({ scheme: SCHEME, path: "/memory-ls configuration" });
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: documentChanged.event,
    provideTextDocumentContent: async () => {
      const parts = await Promise.all(
        servers.all.map(async (served) => {
          const name = served.folder?.name ?? "this window";
          try {
            return describeConfiguration(await served.server.call("memory.configuration", {}), name);
          } catch (error) {
            return `memory-ls configuration of ${name}\n\n${errorText(error)}\n`;
          }
        }),
      );
      return parts.join("\n\n");
    },
  };

  async function showConfiguration(): Promise<void> {
    documentChanged.fire(documentUri);
    const document = await vscode.workspace.openTextDocument(documentUri);
    await vscode.window.showTextDocument(document, { preview: false });
  }

  // ----- Write Settings to memory-ls.toml ----------------------------------------------

  /** Write the project file from the settings in effect (asking first when one exists). */
  async function writeProjectFile(served: Served): Promise<void> {
    try {
      const current = await served.server.call("memory.configuration", {});
      const name = projectFileName(current);
      if (current.projectFile !== null && name === "pyproject.toml") {
        const open = "Open pyproject.toml";
        const choice = await vscode.window.showInformationMessage(
          `memory-ls: the store's settings are the [tool.memory-ls] table of ${current.projectFile}; memory-ls does not rewrite pyproject.toml. Edit the table there.`,
          open,
        );
        if (choice === open) {
          await vscode.window.showTextDocument(vscode.Uri.file(current.projectFile));
        }
        return;
      }
      let replace = false;
      if (current.projectFile !== null) {
        const rewrite = `Rewrite ${name}`;
        const choice = await vscode.window.showWarningMessage(
          `Rewrite ${name} from the settings in effect?`,
          {
            modal: true,
            detail: `${current.projectFile} is written anew: the file's values with your editor settings over them. Its comments and the order of its keys are lost.`,
          },
          rewrite,
        );
        if (choice !== rewrite) {
          return;
        }
        replace = true;
      }
      const written = await served.server.call("memory.writeProjectFile", { replace });
      served.catalog.reload();
      checkSoon(served);
      const open = "Open";
      const choice = await vscode.window.showInformationMessage(
        `memory-ls: ${written.replaced ? "rewrote" : "wrote"} ${written.path}. Commit it with the memories: the terminal, agents and teammates use it.`,
        open,
      );
      if (choice === open) {
        await vscode.window.showTextDocument(vscode.Uri.file(written.path));
      }
    } catch (error) {
      const why = error instanceof ServerCommandError && error.code === "exists" ? " (it was written meanwhile)" : "";
      void vscode.window.showErrorMessage(`memory-ls: writing the project file failed${why}: ${errorText(error)}`);
    }
  }

  context.subscriptions.push(
    documentChanged,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, provider),
    servers.onDidChange(followServers),
    vscode.commands.registerCommand("memoryLs.showConfiguration", showConfiguration),
    vscode.commands.registerCommand("memoryLs.writeProjectFile", async () => {
      const served = await servers.choose();
      if (served !== undefined) {
        await writeProjectFile(served);
      }
    }),
    {
      dispose: () => {
        following.forEach((disposable) => disposable.dispose());
        for (const entry of watchers.values()) {
          entry.disposables.forEach((disposable) => disposable.dispose());
        }
        for (const timer of timers.values()) {
          clearTimeout(timer);
        }
      },
    },
  );
  followServers();
}
