// The editor's agents and terminal use memory-ls too: `memory-ls mcp` (the bundled
// server, for each served workspace folder) is offered to VS Code's MCP clients through
// the MCP server definition API (VS Code 1.101 and later; feature-detected), and a
// `memory-ls` launcher is put first on the integrated terminal's PATH. Both read the
// project file (memory-ls.toml) themselves: the MCP server gets flags only for the
// editor settings the user set, so that it sees the language server's store; the
// terminal's command gets none, as in any other shell.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { findInterpreter } from "./interpreter";
import { launcherPath, launcherScript } from "./python";
import { currentServerSettings } from "./server";
import type { MemoryServers } from "./servers";
import { cliFlags } from "./settings";

/** The provider id of package.json's `contributes.mcpServerDefinitionProviders`. */
export const MCP_PROVIDER_ID = "memoryLs.mcp";

// The MCP server definition API as VS Code 1.101 finalized it; the @types/vscode the
// extension builds against (its minimum VS Code) predates it.
type McpEnv = Record<string, string | number | null>;
interface McpStdioServerDefinition {
  readonly label: string;
  cwd?: vscode.Uri;
  command: string;
  args: string[];
  env: McpEnv;
  version?: string;
}
type McpStdioServerDefinitionClass = new (
  label: string,
  command: string,
  args?: string[],
  env?: McpEnv,
  version?: string,
) => McpStdioServerDefinition;
interface McpServerDefinitionProvider {
  onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): vscode.ProviderResult<McpStdioServerDefinition[]>;
}
interface McpApi {
  registerMcpServerDefinitionProvider(id: string, provider: McpServerDefinitionProvider): vscode.Disposable;
}

/** The pieces of one `memory-ls mcp` server: label, command line and working directory. */
export interface McpServerLaunch {
  label: string;
  command: string;
  args: string[];
  cwd: string;
}

/**
 * `memory-ls mcp` for every served workspace folder, as the language servers are
 * configured: `--root` the folder (the server finds the project file from there) and a
 * flag for each store setting the user set in the editor (none for those left unset,
 * which the project file decides).
 */
export async function mcpLaunches(servers: MemoryServers, extensionPath: string): Promise<McpServerLaunch[]> {
  const { choice } = await findInterpreter();
  const launcher = launcherPath(extensionPath);
  const several = servers.all.length > 1;
  return servers.all.flatMap(({ folder }) => {
    const root = folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined;
    if (root === undefined) {
      return [];
    }
    return [
      {
        label: several && folder !== undefined ? `memory-ls (${folder.name})` : "memory-ls",
        command: choice.command,
        // -I: neither PYTHONPATH nor the user's site-packages shadow the bundled libraries.
        args: ["-I", launcher, "--cli", "mcp", "--root", root, ...cliFlags(currentServerSettings(folder))],
        cwd: root,
      },
    ];
  });
}

function mcpEnabled(): boolean {
  return vscode.workspace.getConfiguration("memoryLs").get<boolean>("mcp.enabled", true);
}

/** Register the MCP server definitions where VS Code has the API; nothing elsewhere. */
export function registerMcpServers(context: vscode.ExtensionContext, servers: MemoryServers): void {
  const api = vscode.lm as unknown as Partial<McpApi> | undefined;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpStdioServerDefinitionClass })
    .McpStdioServerDefinition;
  if (typeof api?.registerMcpServerDefinitionProvider !== "function" || Definition === undefined) {
    return;
  }
  const changed = new vscode.EventEmitter<void>();
  const version = (context.extension.packageJSON as { version?: string }).version;
  context.subscriptions.push(
    changed,
    servers.onDidChange(() => changed.fire()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("memoryLs")) {
        changed.fire();
      }
    }),
    api.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: async () => {
        if (!mcpEnabled()) {
          return [];
        }
        return (await mcpLaunches(servers, context.extensionPath)).map((launch) => {
          const definition = new Definition(launch.label, launch.command, launch.args, {}, version);
          definition.cwd = vscode.Uri.file(launch.cwd);
          return definition;
        });
      },
    }),
  );
}

// ----- the command line in the integrated terminal ----------------------------------

/** The folder of the `memory-ls` launcher the extension writes (in its global storage). */
function binDirectory(context: vscode.ExtensionContext): string {
  return path.join(context.globalStorageUri.fsPath, "bin");
}

/** Write the launcher for the current interpreter; returns its path. */
async function writeLauncher(context: vscode.ExtensionContext): Promise<string> {
  const { choice } = await findInterpreter();
  const script = launcherScript(choice.command, launcherPath(context.extensionPath), process.platform === "win32");
  const directory = binDirectory(context);
  await fs.promises.mkdir(directory, { recursive: true });
  const file = path.join(directory, script.name);
  await fs.promises.writeFile(file, script.text, { mode: 0o755 });
  await fs.promises.chmod(file, 0o755);
  return file;
}

function addToPathEnabled(): boolean {
  return vscode.workspace.getConfiguration("memoryLs").get<boolean>("terminal.addToPath", true);
}

/** Keep the launcher written and, unless turned off, first on new terminals' PATH. */
export function registerTerminalCommand(
  context: vscode.ExtensionContext,
  output: () => vscode.LogOutputChannel | undefined,
): void {
  const collection = context.environmentVariableCollection;
  collection.description = "Puts the memory-ls command line of the Memory LS extension on PATH";
  const update = async (): Promise<void> => {
    try {
      await writeLauncher(context);
    } catch (error) {
      output()?.warn(`Writing the memory-ls launcher failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    collection.clear();
    if (addToPathEnabled()) {
      collection.prepend("PATH", binDirectory(context) + path.delimiter);
    }
  };
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("memoryLs.terminal") || event.affectsConfiguration("memoryLs.server")) {
        void update();
      }
    }),
    vscode.commands.registerCommand("memoryLs.installCommand", async () => {
      await showInstall(context, await writeLauncher(context));
    }),
  );
  void update();
}

/** How to put `memory-ls` on PATH outside the editor: link the launcher, or copy its path. */
async function showInstall(context: vscode.ExtensionContext, launcher: string): Promise<void> {
  const windows = process.platform === "win32";
  const userBin = path.join(os.homedir(), ".local", "bin");
  const link = path.join(userBin, "memory-ls");
  const linkIt = `Link into ${windows ? userBin : "~/.local/bin"}`;
  const copyIt = windows ? "Copy Folder Path" : "Copy Link Command";
  const choices = windows ? [copyIt] : [linkIt, copyIt];
  const detail = windows
    ? `The editor's terminals have memory-ls already. Elsewhere, add ${binDirectory(context)} to PATH (Edit environment variables for your account).`
    : `The editor's terminals have memory-ls already. Elsewhere, link the launcher into a folder on your PATH:\n\nln -sf '${launcher}' ${link}\n\nIt runs the memory-ls this extension carries, with the server's Python, and follows the extension's updates.`;
  const picked = await vscode.window.showInformationMessage(
    "Install the memory-ls command",
    { modal: true, detail },
    ...choices,
  );
  if (picked === copyIt) {
    await vscode.env.clipboard.writeText(windows ? binDirectory(context) : `ln -sf '${launcher}' ${link}`);
    void vscode.window.showInformationMessage("Copied.");
  } else if (picked === linkIt) {
    await fs.promises.mkdir(userBin, { recursive: true });
    await fs.promises.rm(link, { force: true });
    await fs.promises.symlink(launcher, link);
    const onPath = (process.env["PATH"] ?? "").split(path.delimiter).includes(userBin);
    void vscode.window.showInformationMessage(
      onPath
        ? `Linked ${link}: memory-ls runs in any shell.`
        : `Linked ${link}. ~/.local/bin is not on PATH here: add it in your shell's profile.`,
    );
  }
}
