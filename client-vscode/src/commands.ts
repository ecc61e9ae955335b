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
  splitTags,
  suggestName,
  suggestValidName,
  workspaceRelative,
} from "./format";
import type { MemoryInfo, RouteResult, SearchHit } from "./protocol";
import { errorText, SERVER_COMMAND, ServerCommandError, type MemoryServer } from "./server";
import type { MemoryServers, Served } from "./servers";
import { places, type MemoryNode } from "./tree";

/** What a command was invoked on: a tree node, a file, a name, or nothing (then it asks). */
type Target = MemoryNode | vscode.Uri | string | undefined;

/** A memory and the served workspace folder whose server listed it. */
interface FoundMemory {
  memory: MemoryInfo;
  served: Served;
}

interface MemoryPickItem extends vscode.QuickPickItem {
  found: FoundMemory;
}

interface SearchPickItem extends vscode.QuickPickItem {
  path: string;
  line: number;
}

/** Which memories a pick offers, and what it says when there are none. */
interface PickFilter {
  accepts(memory: MemoryInfo): boolean;
  none: string;
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

  /**
   * A command that acts on one memory: the target's, else one picked among the memories
   * of every served workspace folder (not only the active editor's).
   */
  const registerForMemory = (
    id: string,
    title: string,
    preview: boolean,
    handler: (found: FoundMemory) => Promise<unknown>,
    filter?: PickFilter,
  ): void => {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (target?: Target) => {
        let served: Served | undefined;
        try {
          const found = target === undefined ? await pickMemory(title, preview, filter) : await resolveTarget(target);
          served = found?.served;
          if (found !== undefined) {
            await handler(found);
          }
        } catch (error) {
          await showError(error, (served ?? servers.primary).server);
        }
      }),
    );
  };

  /** The memory a tree node, a file or a name stands for. */
  async function resolveTarget(target: Exclude<Target, undefined>): Promise<FoundMemory | undefined> {
    if (typeof target === "object" && "kind" in target) {
      return target.kind === "memory" ? { memory: target.memory, served: target.served } : undefined;
    }
    if (typeof target === "string") {
      // A name: the active editor's folder's memory of that name, else another folder's.
      const found = (await listEverywhere()).find((candidate) => candidate.memory.name === target);
      if (found === undefined) {
        throw new ServerCommandError(`${target} is not a memory.`, "not-found");
      }
      return found;
    }
    const served = servers.forUri(target);
    const { memories } = await served.server.call("memory.list", { scope: "all" });
    const memory = memories.find((candidate) => candidate.path === target.fsPath);
    if (memory === undefined) {
      throw new ServerCommandError(`${displayPath(target.fsPath, places(served.folder))} is not a memory.`, "not-found");
    }
    return { memory, served };
  }

  /**
   * Every served folder's memories, the active editor's folder first; a memory listed by
   * several servers (the global folder, a shared folder) once, under the first.
   */
  async function listEverywhere(): Promise<FoundMemory[]> {
    const active = vscode.window.activeTextEditor?.document.uri;
    const first = active?.scheme === "file" ? servers.forUri(active) : undefined;
    const order = first === undefined ? servers.all : [first, ...servers.all.filter((entry) => entry !== first)];
    const listed = await Promise.allSettled(order.map((served) => served.server.call("memory.list", { scope: "all" })));
    const found: FoundMemory[] = [];
    const seen = new Set<string>();
    listed.forEach((outcome, index) => {
      const served = order[index];
      if (outcome.status !== "fulfilled" || served === undefined) {
        return;
      }
      for (const memory of outcome.value.memories) {
        if (!seen.has(memory.path)) {
          seen.add(memory.path);
          found.push({ memory, served });
        }
      }
    });
    const failure = listed.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    if (found.length === 0 && failure !== undefined) {
      throw failure.reason;
    }
    return found;
  }

  /** What a row of a memory pick says; with several workspace folders, which one it is in. */
  function pickText({ memory, served }: FoundMemory): vscode.QuickPickItem {
    const text = memoryPickText(memory, places(served.folder));
    if (servers.all.length > 1 && served.folder !== undefined) {
      return { ...text, description: `${served.folder.name} · ${text.description ?? ""}` };
    }
    return text;
  }

  async function pickMemory(title: string, preview: boolean, filter?: PickFilter): Promise<FoundMemory | undefined> {
    const every = await listEverywhere();
    const offered = filter === undefined ? every : every.filter((found) => filter.accepts(found.memory));
    if (offered.length === 0) {
      void vscode.window.showInformationMessage(
        every.length === 0 || filter === undefined
          ? "There are no memories yet. Create one with Memory: New Memory…."
          : filter.none,
      );
      return undefined;
    }
    const pick = vscode.window.createQuickPick<MemoryPickItem>();
    pick.title = title;
    pick.placeholder = "Type a memory name, folder, scope or #tag";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.items = offered.map((found) => ({ ...pickText(found), found }));
    const before = vscode.window.activeTextEditor;
    let previewed = false;
    if (preview) {
      pick.onDidChangeActive((active) => {
        const item = active[0];
        if (item !== undefined) {
          previewed = true;
          void vscode.window.showTextDocument(vscode.Uri.file(item.found.memory.path), {
            preview: true,
            preserveFocus: true,
          });
        }
      });
    }
    const chosen = await new Promise<FoundMemory | undefined>((resolve) => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]?.found);
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

  registerForMemory("memoryLs.openMemory", "Open Memory", true, async ({ memory }) => {
    await open(memory.path);
  });

  registerForMemory("memoryLs.editMemory", "Edit Memory", true, async ({ memory }) => {
    await open(memory.path);
    if (memory.readOnly) {
      void vscode.window.showWarningMessage(
        `Memory ${memory.name} is read-only (its folder is configured read-only, or Serena's read_only_memory_patterns match it).`,
      );
    }
  });

  registerForMemory("memoryLs.deleteMemory", "Delete Memory", false, async ({ memory, served }) => {
    const { server, catalog, folder } = served;
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

  // Every served folder's memories are searched (results labelled by folder when there
  // are several); `#tag` words filter by tag as Open Memory's do; with no exact match the
  // server's closest words are searched instead, and the pick says so.
  context.subscriptions.push(
    vscode.commands.registerCommand("memoryLs.searchMemories", async () => {
      try {
        await searchMemories();
      } catch (error) {
        await showError(error, servers.primary.server);
      }
    }),
  );

  async function searchEverywhere(text: string): Promise<{ items: SearchPickItem[]; closest: string | undefined }> {
    const { words, tags } = splitTags(text);
    const results = await Promise.allSettled(
      servers.all.map(async (served) => {
        if (words.trim()) {
          const found = await served.server.call("memory.search", { query: words, limit: 200, ...(tags.length ? { tags } : {}) });
          return { served, hits: found.results, closest: found.closest };
        }
        // Only tags: every memory that has them, at its first line.
        const { memories } = await served.server.call("memory.list", { scope: "all", tags });
        const hits: SearchHit[] = memories.map((memory) => ({
          name: memory.name,
          path: memory.path,
          line: 1,
          text: memory.tags.map((tag) => `#${tag}`).join(" "),
          score: 0,
        }));
        return { served, hits, closest: undefined };
      }),
    );
    const answered = results.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
    const failure = results.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    if (answered.length === 0 && failure !== undefined) {
      throw failure.reason;
    }
    // An exact match anywhere wins over the closest words elsewhere.
    const exact = answered.filter((answer) => answer.hits.length > 0 && answer.closest === undefined);
    const shown = exact.length > 0 ? exact : answered;
    const seen = new Set<string>();
    const rows: { hit: SearchHit; served: Served }[] = [];
    for (const { served, hits } of shown) {
      for (const hit of hits) {
        const key = `${hit.path}:${hit.line}`;
        if (!seen.has(key)) {
          seen.add(key);
          rows.push({ hit, served });
        }
      }
    }
    rows.sort((a, b) => b.hit.score - a.hit.score);
    const several = servers.all.length > 1;
    const items = rows.map(({ hit, served }) => ({
      label: hit.name,
      description: several && served.folder !== undefined ? `${served.folder.name} · line ${hit.line}` : `line ${hit.line}`,
      detail: hit.text,
      path: hit.path,
      line: hit.line,
      alwaysShow: true,
    }));
    const closest = exact.length > 0 ? undefined : answered.find((answer) => answer.closest !== undefined)?.closest;
    return { items, closest };
  }

  async function searchMemories(): Promise<void> {
    const pick = vscode.window.createQuickPick<SearchPickItem>();
    const title = "Search Memories";
    pick.title = title;
    const placeholder = "Words to find in memory names and text (case-insensitive); #tag filters by tag";
    pick.placeholder = placeholder;
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
      pick.title = title;
      if (!query.trim()) {
        pick.items = [];
        pick.busy = false;
        return;
      }
      pick.busy = true;
      timer = setTimeout(() => {
        searchEverywhere(query).then(
          ({ items, closest }) => {
            if (mine !== generation) {
              return;
            }
            pick.items = items;
            pick.title =
              closest !== undefined
                ? `${title}: no exact match; closest: ${closest}`
                : items.length === 0
                  ? `${title}: no match`
                  : title;
            pick.busy = false;
          },
          (error: unknown) => {
            if (mine === generation) {
              pick.items = [];
              pick.busy = false;
              pick.title = `${title}: ${errorText(error)}`;
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
  }

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

  registerForMemory("memoryLs.moveMemory", "Move/Rename Memory", false, async ({ memory, served }) => {
    const { server, catalog, folder } = served;
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
  // From the palette it offers only the memories whose names are invalid (the listing's
  // validName), or says there are none.
  registerForMemory(
    "memoryLs.renameFile",
    "Rename File to a Valid Name",
    false,
    async ({ memory, served }) => {
      const { server, catalog, folder } = served;
      if (memory.validName) {
        void vscode.window.showInformationMessage(`Memory ${memory.name} has a valid name already: there is nothing to fix.`);
        return;
      }
      await renameToValidName(memory, server, catalog, folder);
    },
    { accepts: (memory) => !memory.validName, none: "Every memory has a valid name: there is no file to rename." },
  );

  async function renameToValidName(
    memory: MemoryInfo,
    server: MemoryServer,
    catalog: Served["catalog"],
    folder: Served["folder"],
  ): Promise<void> {
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
  }

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
