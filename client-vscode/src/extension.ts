// Memory LS: starts the memory-ls language server and adds the Memory commands, the
// Memories view and the status bar item.
import * as vscode from "vscode";
import { MemoryCatalog } from "./catalog";
import { registerCommands } from "./commands";
import { MemoryServer } from "./server";
import { MemoryStatus } from "./status";
import { MemoriesTree } from "./tree";

let server: MemoryServer | undefined;

export function activate(context: vscode.ExtensionContext): void {
  server = new MemoryServer(context.extensionPath);
  const catalog = new MemoryCatalog(server);
  const tree = new MemoriesTree(catalog);
  context.subscriptions.push(
    server,
    catalog,
    tree,
    vscode.window.createTreeView("memoryLs.memories", { treeDataProvider: tree, showCollapseAll: true }),
    new MemoryStatus(server, catalog),
  );
  registerCommands(context, server, catalog);
  void server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
