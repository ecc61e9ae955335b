// The palette commands (category "Memory"). Every store operation goes through the
// server's `memory.*` commands; errors show the server's message.
import * as fs from "node:fs";
import * as nodePath from "node:path";
import * as vscode from "vscode";
import { openPythonSetting } from "./interpreter";
import {
  aboutPickItems,
  describeRoute,
  displayPath,
  memoryPickText,
  parseTags,
  suggestName,
  suggestValidName,
  workspaceRelative,
} from "./format";
import type { MemoryInfo, RouteResult, Scope } from "./protocol";
import { errorText, SERVER_COMMAND, ServerCommandError, type MemoryServer } from "./server";
import type { MemoryServers, Served } from "./servers";
import { places, type MemoryNode } from "./tree";

/** What a command was invoked on: a tree node, a file, a name, or nothing (then it asks). */
type Target = MemoryNode | vscode.Uri | string | undefined;

interface MemoryRef {
  name: string;
  path: string;
  scope: Scope;
  readOnly: boolean;
}

interface MemoryPickItem extends vscode.QuickPickItem {
  memory: MemoryInfo;
}

interface SearchPickItem extends vscode.QuickPickItem {
  path: string;
  line: number;
}

const SEARCH_DELAY_MS = 150;
// Memories shown by "Show Memories About This File" (the rest are counted).
const ABOUT_LIMIT = 50;

export function registerCommands(context: vscode.ExtensionContext, servers: MemoryServers): void {
  /** The served workspace folder a command acts in: its target's, else the active or picked one. */
  async function servedFor(target: Target): Promise<Served | undefined> {
    if (target !== undefined && typeof target === "object" && "kind" in target) {
      return target.served;
    }
    if (target instanceof vscode.Uri) {
      return servers.forUri(target);
    }
    return servers.choose();
  }

  const register = (id: string, handler: (served: Served, target?: Target) => Promise<unknown>): void => {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (target?: Target) => {
        let served: Served | undefined;
        try {
          served = await servedFor(target);
          if (served !== undefined) {
            await handler(served, target);
          }
        } catch (error) {
          await showError(error, (served ?? servers.primary).server);
        }
      }),
    );
  };

  /** A memory the command acts on: the target, else one the user picks. */
  async function resolveTarget(
    served: Served,
    target: Target,
    title: string,
    preview: boolean,
  ): Promise<MemoryRef | undefined> {
    const { server, folder } = served;
    if (target !== undefined && typeof target === "object" && "kind" in target) {
      return target.kind === "memory" ? target.memory : undefined;
    }
    if (target instanceof vscode.Uri || typeof target === "string") {
      const path = target instanceof vscode.Uri ? target.fsPath : undefined;
      const { memories } = await server.call("memory.list", { scope: "all" });
      const found = memories.find((memory) => (path !== undefined ? memory.path === path : memory.name === target));
      if (found === undefined) {
        throw new ServerCommandError(
          `${path !== undefined ? displayPath(path, places(folder)) : String(target)} is not a memory.`,
          "not-found",
        );
      }
      return found;
    }
    return pickMemory(served, title, preview);
  }

  async function pickMemory({ server, folder }: Served, title: string, preview: boolean): Promise<MemoryInfo | undefined> {
    const { memories } = await server.call("memory.list", { scope: "all" });
    if (memories.length === 0) {
      void vscode.window.showInformationMessage("There are no memories yet. Create one with Memory: New Memory….");
      return undefined;
    }
    const where = places(folder);
    const pick = vscode.window.createQuickPick<MemoryPickItem>();
    pick.title = title;
    pick.placeholder = "Type a memory name, folder, scope or #tag";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.items = memories.map((memory) => ({ ...memoryPickText(memory, where), memory }));
    const before = vscode.window.activeTextEditor;
    let previewed = false;
    if (preview) {
      pick.onDidChangeActive((active) => {
        const item = active[0];
        if (item !== undefined) {
          previewed = true;
          void vscode.window.showTextDocument(vscode.Uri.file(item.memory.path), {
            preview: true,
            preserveFocus: true,
          });
        }
      });
    }
    const chosen = await new Promise<MemoryInfo | undefined>((resolve) => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]?.memory);
        pick.hide();
      });
      pick.onDidHide(() => resolve(undefined));
      pick.show();
    });
    pick.dispose();
    if (chosen === undefined && previewed && before !== undefined) {
      await vscode.window.showTextDocument(before.document, { viewColumn: before.viewColumn, selection: before.selection });
    }
    return chosen;
  }

  /**
   * Ask for a name, showing where a save of it would go while it is typed. For a name
   * that will be written (`forWrite`), a read-only target is an error that blocks the
   * prompt; a prefix that matches no folder is a warning.
   */
  function askName(
    { server, folder }: Served,
    title: string,
    value: string,
    prompt: string,
    forWrite = true,
  ): Thenable<string | undefined> {
    return vscode.window.showInputBox({
      title,
      value,
      prompt,
      placeHolder: "e.g. FEATURE_auth, auth/login_flow, global/tips",
      ignoreFocusOut: true,
      validateInput: async (text) => {
        if (!text.trim()) {
          return { message: "Type a memory name.", severity: vscode.InputBoxValidationSeverity.Info };
        }
        try {
          const route = await server.call("memory.route", { name: text });
          return { message: describeRoute(route, places(folder)), severity: routeSeverity(route, forWrite) };
        } catch (error) {
          return { message: errorText(error), severity: vscode.InputBoxValidationSeverity.Error };
        }
      },
    }).then((name) => (name?.trim() ? name.trim() : undefined));
  }

  /** Confirm overwriting when a name exists; false when the user declines. */
  async function confirmOverwrite({ server, folder }: Served, name: string): Promise<boolean> {
    const route = await server.call("memory.route", { name });
    if (!route.exists) {
      return true;
    }
    const answer = await vscode.window.showWarningMessage(
      `Memory ${route.name} already exists (${displayPath(route.path, places(folder))}). Overwrite it?`,
      { modal: true },
      "Overwrite",
    );
    return answer === "Overwrite";
  }

  async function open(path: string, line?: number): Promise<void> {
    const options: vscode.TextDocumentShowOptions = { preview: false };
    if (line !== undefined) {
      const position = new vscode.Position(Math.max(0, line - 1), 0);
      options.selection = new vscode.Range(position, position);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(path), options);
  }

  register("memoryLs.saveSelection", async (served) => {
    const { server, catalog, folder } = served;
    const editor = vscode.window.activeTextEditor;
    const text = editor?.document.getText(editor.selection) ?? "";
    if (editor === undefined || !text.trim()) {
      void vscode.window.showWarningMessage("Select the text to save as a memory first.");
      return;
    }
    const name = await askName(served, "Save Selection as Memory", suggestName(text), "Name of the new memory");
    if (name === undefined || !(await confirmOverwrite(served, name))) {
      return;
    }
    const content = text.endsWith("\n") ? text : `${text}\n`;
    const saved = await server.call("memory.save", { name, content });
    catalog.reload();
    const choice = await vscode.window.showInformationMessage(
      `Saved memory ${saved.name} to ${displayPath(saved.path, places(folder))}.`,
      "Open",
    );
    if (choice === "Open") {
      await open(saved.path);
    }
  });

  register("memoryLs.newMemory", async (served, target) => {
    const { server, catalog, folder } = served;
    const name =
      typeof target === "string" ? target : await askName(served, "New Memory", "", "Name of the new memory");
    if (name === undefined) {
      return;
    }
    const route = await server.call("memory.route", { name });
    if (route.readOnly && !route.exists) {
      // Refused before the tags are asked for, not after.
      void vscode.window.showErrorMessage(describeRoute(route, places(folder)));
      return;
    }
    if (route.exists) {
      const choice = await vscode.window.showWarningMessage(
        `Memory ${route.name} already exists (${displayPath(route.path, places(folder))}).`,
        "Open It",
      );
      if (choice === "Open It") {
        await open(route.path);
      }
      return;
    }
    const tagText = await vscode.window.showInputBox({
      title: `New Memory ${route.name}`,
      prompt: "Tags, separated by commas or spaces (optional)",
      placeHolder: "e.g. auth, api",
      ignoreFocusOut: true,
    });
    if (tagText === undefined) {
      return;
    }
    const tags = parseTags(tagText);
    const title = route.name.split("/").pop() ?? route.name;
    const saved = await server.call("memory.save", {
      name,
      content: `# ${title}\n\n`,
      ...(tags.length > 0 ? { tags } : {}),
    });
    catalog.reload();
    const editor = await vscode.window.showTextDocument(vscode.Uri.file(saved.path), { preview: false });
    const end = editor.document.lineAt(editor.document.lineCount - 1).range.end;
    editor.selection = new vscode.Selection(end, end);
  });

  register("memoryLs.openMemory", async (served, target) => {
    const memory = await resolveTarget(served, target, "Open Memory", true);
    if (memory !== undefined) {
      await open(memory.path);
    }
  });

  register("memoryLs.editMemory", async (served, target) => {
    const memory = await resolveTarget(served, target, "Edit Memory", true);
    if (memory === undefined) {
      return;
    }
    await open(memory.path);
    if (memory.readOnly) {
      void vscode.window.showWarningMessage(
        `Memory ${memory.name} is read-only (its folder is configured read-only, or Serena's read_only_memory_patterns match it).`,
      );
    }
  });

  register("memoryLs.deleteMemory", async (served, target) => {
    const { server, catalog, folder } = served;
    const memory = await resolveTarget(served, target, "Delete Memory", false);
    if (memory === undefined) {
      return;
    }
    const answer = await vscode.window.showWarningMessage(
      `Delete memory ${memory.name}?`,
      { modal: true, detail: `${displayPath(memory.path, places(folder))} will be deleted from disk.` },
      "Delete",
    );
    if (answer !== "Delete") {
      return;
    }
    const deleted = await server.call("memory.delete", { name: memory.name, scope: memory.scope });
    catalog.reload();
    void vscode.window.showInformationMessage(
      `Deleted memory ${deleted.name} (${displayPath(deleted.path, places(folder))}).`,
    );
  });

  register("memoryLs.searchMemories", async (served) => {
    const { server } = served;
    const pick = vscode.window.createQuickPick<SearchPickItem>();
    pick.title = "Search Memories";
    pick.placeholder = "Words to find in memory names and text (case-insensitive)";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    const editor = vscode.window.activeTextEditor;
    const selected = editor?.document.getText(editor.selection).trim() ?? "";
    if (selected && !selected.includes("\n")) {
      pick.value = selected;
    }
    let timer: NodeJS.Timeout | undefined;
    let generation = 0;
    const search = (query: string): void => {
      clearTimeout(timer);
      const mine = ++generation;
      if (!query.trim()) {
        pick.items = [];
        pick.busy = false;
        return;
      }
      pick.busy = true;
      timer = setTimeout(() => {
        server.call("memory.search", { query, limit: 200 }).then(
          ({ results }) => {
            if (mine !== generation) {
              return;
            }
            pick.items = results.map((hit) => ({
              label: hit.name,
              description: `line ${hit.line}`,
              detail: hit.text,
              path: hit.path,
              line: hit.line,
              alwaysShow: true,
            }));
            pick.busy = false;
          },
          (error: unknown) => {
            if (mine === generation) {
              pick.items = [];
              pick.busy = false;
              pick.placeholder = errorText(error);
            }
          },
        );
      }, SEARCH_DELAY_MS);
    };
    pick.onDidChangeValue(search);
    const chosen = await new Promise<SearchPickItem | undefined>((resolve) => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]);
        pick.hide();
      });
      pick.onDidHide(() => resolve(undefined));
      pick.show();
      search(pick.value);
    });
    clearTimeout(timer);
    pick.dispose();
    if (chosen !== undefined) {
      await open(chosen.path, chosen.line);
    }
  });

  // The memories that mention the active editor's file (or the file or folder the
  // explorer's menu was opened on), best first; choosing one opens it at that line.
  register("memoryLs.showMemoriesAbout", async (served, target) => {
    const { server, folder } = served;
    const uri = target instanceof vscode.Uri ? target : vscode.window.activeTextEditor?.document.uri;
    if (uri === undefined || uri.scheme !== "file") {
      void vscode.window.showWarningMessage("Open a file of the workspace first.");
      return;
    }
    const root = places(folder).root;
    const relative = root === undefined ? undefined : workspaceRelative(root, uri.fsPath);
    if (relative === undefined) {
      void vscode.window.showWarningMessage(`${uri.fsPath} is not inside the workspace folder.`);
      return;
    }
    const result = await server.call("memory.about", { target: relative, limit: ABOUT_LIMIT });
    if (result.memories.length === 0) {
      void vscode.window.showInformationMessage(`No memory mentions ${relative}.`);
      return;
    }
    const more = result.more > 0 ? ` (the best ${result.memories.length}; ${result.more} more)` : "";
    const chosen = await vscode.window.showQuickPick(aboutPickItems(result), {
      title: `Memories About ${relative}${more}`,
      placeHolder: "Choose a memory to open it at the line that mentions the file",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (chosen !== undefined) {
      await open(chosen.path, chosen.line);
    }
  });

  // What changed in the memories since a revision (memory-ls changes), as text in an
  // output channel of its own.
  let changesChannel: vscode.OutputChannel | undefined;
  register("memoryLs.showChanges", async (served) => {
    const rev = await vscode.window.showInputBox({
      title: "Memory: Show Changes Since…",
      prompt: "A git revision (branch, tag or commit); empty: the merge base with the default branch",
      placeHolder: "the merge base with origin/HEAD, main or master",
    });
    if (rev === undefined) {
      return;
    }
    const given = rev.trim();
    const result = await served.server.call("memory.changes", {
      ...(given === "" ? {} : { rev: given }),
      withText: true,
    });
    if (changesChannel === undefined) {
      changesChannel = vscode.window.createOutputChannel("Memory Changes");
      context.subscriptions.push(changesChannel);
    }
    changesChannel.clear();
    changesChannel.append(result.text ?? "");
    changesChannel.show(true);
  });

  register("memoryLs.moveMemory", async (served, target) => {
    const { server, catalog, folder } = served;
    const memory = await resolveTarget(served, target, "Move/Rename Memory", false);
    if (memory === undefined) {
      return;
    }
    const newName = await askName(served, `Move/Rename Memory ${memory.name}`, memory.name, "New name (routed like a new save)");
    if (newName === undefined || newName === memory.name) {
      return;
    }
    const moved = await server.call("memory.move", { name: memory.name, newName, scope: memory.scope });
    catalog.reload();
    const references =
      moved.updatedReferences === 1 ? "1 reference updated" : `${moved.updatedReferences} references updated`;
    const choice = await vscode.window.showInformationMessage(
      `Moved memory ${moved.name} to ${moved.newName} (${displayPath(moved.path, places(folder))}); ${references}.`,
      "Open",
    );
    if (choice === "Open") {
      await open(moved.path);
    }
  });

  // A file whose name breaks the naming rules is renamed to a valid name through the
  // editor (memory.move could rename it too): open editors move with it, and the server's
  // willRenameFiles rewrites the references to it (as its invalid-name quick fix does).
  register("memoryLs.renameFile", async (served, target) => {
    const { server, catalog, folder } = served;
    const memory = await resolveTarget(served, target, "Rename File to a Valid Name", false);
    if (memory === undefined) {
      return;
    }
    try {
      await server.call("memory.route", { name: memory.name, scope: memory.scope });
      throw new ServerCommandError(
        `Memory ${memory.name} has a valid name: it is read-only because of its folder or Serena's read_only_memory_patterns, and is not renamed here.`,
        "read-only",
      );
    } catch (error) {
      if (!(error instanceof ServerCommandError && error.code === "invalid-name")) {
        throw error;
      }
    }
    const directory = nodePath.dirname(memory.path);
    const segments = memory.name.split("/");
    const topic = segments.slice(0, -1).join("/");
    const newPath = (base: string): string => nodePath.join(directory, `${base}.md`);
    const base = await vscode.window.showInputBox({
      title: `Rename ${memory.name}`,
      prompt: "A valid memory name for the file (it stays in its folder)",
      value: suggestValidName(segments[segments.length - 1] ?? memory.name),
      ignoreFocusOut: true,
      validateInput: async (text) => {
        const name = text.trim();
        if (!name || name.includes("/")) {
          return "Type a name without /: the file stays in its folder.";
        }
        try {
          await server.call("memory.route", { name: topic ? `${topic}/${name}` : name, scope: memory.scope });
        } catch (error) {
          return errorText(error);
        }
        return fs.existsSync(newPath(name)) ? `${displayPath(newPath(name), places(folder))} already exists.` : undefined;
      },
    });
    if (base === undefined) {
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.renameFile(vscode.Uri.file(memory.path), vscode.Uri.file(newPath(base.trim())), { overwrite: false });
    if (!(await vscode.workspace.applyEdit(edit))) {
      throw new ServerCommandError(`${displayPath(memory.path, places(folder))} could not be renamed.`, "io-error");
    }
    catalog.reload();
  });

  register("memoryLs.routeMemory", async (served) => {
    const { server, folder } = served;
    const editor = vscode.window.activeTextEditor;
    const selected = editor?.document.getText(editor.selection).trim() ?? "";
    const name = await askName(served, 
      "Where Would This Go?",
      selected && !selected.includes("\n") ? selected : "",
      "A memory name: its route is shown as you type",
      false,
    );
    if (name === undefined) {
      return;
    }
    const route = await server.call("memory.route", { name });
    const text = describeRoute(route, places(folder));
    if (route.exists) {
      if ((await vscode.window.showInformationMessage(text, "Open")) === "Open") {
        await open(route.path);
      }
    } else if ((await vscode.window.showInformationMessage(text, "Create It")) === "Create It") {
      await vscode.commands.executeCommand("memoryLs.newMemory", route.name);
    }
  });

  // Every served folder's server, without asking which.
  context.subscriptions.push(
    vscode.commands.registerCommand(SERVER_COMMAND, async (folder: string, command: string, ...args: unknown[]) => {
      const served = servers.all.find((entry) => (entry.folder?.uri.toString() ?? "") === folder) ?? servers.primary;
      try {
        return await served.server.execute(command, args);
      } catch (error) {
        await showError(error, served.server);
        return undefined;
      }
    }),
    vscode.commands.registerCommand("memoryLs.restartServer", async () => {
      await Promise.all(servers.all.map(({ server }) => server.restart()));
    }),
    vscode.commands.registerCommand("memoryLs.refresh", async () => {
      await Promise.all(servers.all.map(({ catalog }) => catalog.reloadNow()));
    }),
  );

  register("memoryLs.choosePython", async () => {
    await openPythonSetting();
  });

  register("memoryLs.showOutput", async (served) => {
    const { server } = served;
    server.output.show(true);
  });

  register("memoryLs.revealInOS", async (_served, target) => {
    const uri = nodeUri(target);
    if (uri !== undefined) {
      await vscode.commands.executeCommand("revealFileInOS", uri);
    }
  });

  register("memoryLs.revealInExplorer", async (_served, target) => {
    const uri = nodeUri(target);
    if (uri !== undefined) {
      await vscode.commands.executeCommand("revealInExplorer", uri);
    }
  });
}

function nodeUri(target: Target): vscode.Uri | undefined {
  if (target instanceof vscode.Uri) {
    return target;
  }
  if (target !== undefined && typeof target === "object") {
    if (target.kind === "memory") {
      return vscode.Uri.file(target.memory.path);
    }
    if (target.kind === "folder") {
      return vscode.Uri.file(target.group.folder);
    }
  }
  return undefined;
}

async function showError(error: unknown, server: MemoryServer): Promise<void> {
  if (error instanceof ServerCommandError && error.code === "not-running") {
    const choice = await vscode.window.showErrorMessage(error.message, "Restart Server", "Show Output");
    if (choice === "Restart Server") {
      await server.restart();
    } else if (choice === "Show Output") {
      server.output.show();
    }
    return;
  }
  // The server's messages name the memory already ("Memory 'x' …"): no prefix.
  void vscode.window.showErrorMessage(errorText(error));
}

function routeSeverity(route: RouteResult, forWrite: boolean): vscode.InputBoxValidationSeverity {
  if (route.readOnly) {
    return forWrite ? vscode.InputBoxValidationSeverity.Error : vscode.InputBoxValidationSeverity.Warning;
  }
  return route.unknownPrefix && !route.exists
    ? vscode.InputBoxValidationSeverity.Warning
    : vscode.InputBoxValidationSeverity.Info;
}
