// Memory LS: starts the memory-ls language servers (one per workspace folder with a
// memory store) and adds the Memory commands, the Memories view and the status bar item.
import * as vscode from "vscode";
import { registerMcpServers, registerTerminalCommand } from "./agents";
import { registerChangesView } from "./changesView";
import { registerCommands } from "./commands";
import { registerConfiguration } from "./configuration";
import { AgentContextView } from "./contextView";
import { registerGraph } from "./graph";
import { registerLinks } from "./links";
import { registerRenameSaves } from "./renameSaves";
import { MemoryServers } from "./servers";
import { MemoryStatus } from "./status";
import { MemoriesTree } from "./tree";

let servers: MemoryServers | undefined;

export function activate(context: vscode.ExtensionContext): ReturnType<typeof registerLinks> {
  servers = new MemoryServers(context.extensionPath);
  const tree = new MemoriesTree(servers);
  context.subscriptions.push(
    servers,
    tree,
    vscode.window.createTreeView("memoryLs.memories", { treeDataProvider: tree, showCollapseAll: true }),
    new MemoryStatus(servers),
    registerRenameSaves(),
  );
  registerCommands(context, servers);
  registerConfiguration(context, servers);
  registerChangesView(context, servers);
  registerGraph(context, servers);
  context.subscriptions.push(new AgentContextView(servers, context.workspaceState));
  const running = servers;
  registerMcpServers(context, running);
  registerTerminalCommand(context, () => running.all[0]?.server.output);
  void servers.update();
  // The Markdown preview calls `extendMarkdownIt` of what activate returns.
  return registerLinks(context, running);
}

export async function deactivate(): Promise<void> {
  await servers?.stop();
  servers = undefined;
}
