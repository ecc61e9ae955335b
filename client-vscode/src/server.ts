// The language server's lifecycle (start, stop, restart, settings) and typed calls of
// its `memory.*` commands over workspace/executeCommand.
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  ResponseError,
  State,
  type DocumentSelector,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { findInterpreter, onPythonExtensionChange, openPythonSetting, probe, workspaceRoot } from "./interpreter";
import type { CommandName, Commands } from "./protocol";
import { launcherPath, serverCommand, type Action, type StartProblem } from "./python";
import { trackRenameEdit } from "./renameSaves";
import { explicitSection, toServerSettings, type ServerSettings } from "./settings";

export type ServerState =
  | { kind: "starting" }
  | { kind: "running"; python: string }
  | { kind: "stopped"; reason: string };

/** A failed server command: the server's message, and its `data.code` (SPEC 3.3). */
export class ServerCommandError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = "ServerCommandError";
  }
}

/**
 * The `memoryLs` settings the server of a workspace folder should see now: those the
 * user set, at any level. A setting left unset is left out, so that the project file
 * (memory-ls.toml) decides it; the manifest's defaults are never sent.
 */
export function currentServerSettings(folder: vscode.WorkspaceFolder | undefined = workspaceRoot()): ServerSettings {
  const config = vscode.workspace.getConfiguration("memoryLs", folder);
  return toServerSettings(explicitSection((key) => config.inspect(key)));
}

/** Whether VS Code's built-in Markdown support (which outlines headings) is there. */
function markdownOutlines(): boolean {
  return vscode.extensions.getExtension("vscode.markdown-language-features") !== undefined;
}

/** The VS Code command that runs a server command of a code action on the server that offered it. */
export const SERVER_COMMAND = "memoryLs.serverCommand";

/**
 * A client that does not register the server's commands as VS Code commands: with one
 * server per workspace folder the second registration of `memory.save` would fail. The
 * commands of code actions go through SERVER_COMMAND instead (see the middleware).
 */
class MemoryLanguageClient extends LanguageClient {
  override registerFeature(feature: Parameters<LanguageClient["registerFeature"]>[0]): void {
    const method = (feature as { registrationType?: { method?: string } }).registrationType?.method;
    if (method !== ExecuteCommandRequest.method) {
      super.registerFeature(feature);
    }
  }
}

const ACTION_LABELS: Record<Action, string> = {
  "choose-python": "Choose Python…",
  "select-interpreter": "Select Interpreter…",
  "show-output": "Show Output",
};

/** Which documents a server takes, when several workspace folders each have one. */
export interface ServerRole {
  /** Documents the server is sent (open, completion, diagnostics …). */
  documentSelector: DocumentSelector;
  /** Whether a file's workspace diagnostics are this server's to show (no duplicates). */
  owns(uri: vscode.Uri): boolean;
}

export class MemoryServer implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private currentState: ServerState = { kind: "stopped", reason: "not started yet" };
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly disposables: vscode.Disposable[] = [];
  // Listeners of server notifications, by method (kept across restarts).
  private readonly notificationListeners = new Map<string, Set<(params: unknown) => void>>();
  /** Fires whenever the server starts, stops or fails to start. */
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly configurationEmitter = new vscode.EventEmitter<void>();
  /** Fires when the server was sent its settings (it asks at start and after each change). */
  readonly onDidSendSettings = this.configurationEmitter.event;

  /**
   * `extensionPath`: where the VSIX is installed; the bundled server is in it.
   * `folder`: the workspace folder served (its root, its settings); `label` names the
   * output channel ("Memory LS" for the first).
   */
  constructor(
    private readonly extensionPath: string,
    readonly folder: vscode.WorkspaceFolder | undefined,
    private readonly role: ServerRole,
    label = "Memory LS",
  ) {
    this.output = vscode.window.createOutputChannel(label, { log: true });
    this.disposables.push(
      this.output,
      this.stateEmitter,
      this.configurationEmitter,
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("memoryLs.server", this.folder)) {
          void this.restart();
        } else if (event.affectsConfiguration("memoryLs", this.folder)) {
          void this.pushSettings();
        }
      }),
    );
    void onPythonExtensionChange(() => {
      if (!vscode.workspace.getConfiguration("memoryLs").get<string>("server.pythonPath")?.trim()) {
        void this.restart();
      }
    }).then((disposable) => disposable && this.disposables.push(disposable));
  }

  get state(): ServerState {
    return this.currentState;
  }

  private setState(state: ServerState): void {
    this.currentState = state;
    // For `when` clauses (the Memories view's welcome text).
    void vscode.commands.executeCommand("setContext", "memoryLs.serverState", state.kind);
    this.stateEmitter.fire(state);
  }

  /** Start the server (once; concurrent calls share the start). */
  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) {
      return;
    }
    this.setState({ kind: "starting" });
    const folder = this.folder;
    const cwd = folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined;
    const interpreter = await findInterpreter();
    this.output.info(`Python: ${interpreter.choice.command} (${interpreter.choice.source})`);
    const verdict = await probe(interpreter, cwd, this.extensionPath);
    if (!verdict.ok) {
      this.output.error(verdict.problem.message);
      this.setState({ kind: "stopped", reason: verdict.problem.message });
      void this.offer(verdict.problem);
      return;
    }
    const { info } = verdict;
    this.output.info(
      `Bundled memory-ls ${info.memory_ls ?? "?"} on ${info.implementation} ${info.python} (${info.executable}, prefix ${info.prefix})`,
    );
    const { command, args } = serverCommand(interpreter.choice, launcherPath(this.extensionPath));
    const serverOptions: ServerOptions = { command, args, options: { cwd } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: this.role.documentSelector,
      ...(folder !== undefined ? { workspaceFolder: folder } : {}),
      // No initializationOptions: the server pulls the settings (workspace/configuration,
      // answered below) before it indexes anything, and a snapshot sent at start would
      // keep applying a setting the user removes later, over the project file.
      outputChannel: this.output,
      traceOutputChannel: this.output,
      middleware: {
        // A code action's command runs on this server (see MemoryLanguageClient).
        provideCodeActions: async (document, range, context, token, next) => {
          const actions = await next(document, range, context, token);
          const key = this.folder?.uri.toString() ?? "";
          const routed = (command: vscode.Command): vscode.Command => ({
            title: command.title,
            command: SERVER_COMMAND,
            arguments: [key, command.command, ...(command.arguments ?? [])],
          });
          return actions?.map((action) => {
            if (action instanceof vscode.CodeAction) {
              if (action.command !== undefined) {
                action.command = routed(action.command);
              }
              return action;
            }
            return routed(action);
          });
        },
        // VS Code's Markdown extension outlines the headings already: ours would show
        // each one twice in the Outline and the breadcrumbs.
        provideDocumentSymbols: (document, token, next) =>
          markdownOutlines() ? [] : next(document, token),
        // In a multi-root window each file's problems come from the server of its folder.
        provideWorkspaceDiagnostics: (resultIds, token, resultReporter, next) =>
          next(
            resultIds,
            token,
            (chunk) => resultReporter(chunk && { items: chunk.items.filter((item) => this.role.owns(item.uri)) }),
          ),
        workspace: {
          // The links a rename rewrites in other files are saved after it (renameSaves.ts).
          willRenameFiles: async (event, next) => {
            const edit = await next(event);
            trackRenameEdit(edit);
            return edit;
          },
          // Answer workspace/configuration with the server's keys the user set (not
          // the manifest's defaults, which would override the project file).
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            if (!Array.isArray(answer)) {
              return answer;
            }
            const sections = answer.map((section, index) =>
              params.items[index]?.section === "memoryLs" ? currentServerSettings(this.folder) : section,
            );
            this.configurationEmitter.fire();
            return sections;
          },
        },
      },
    };
    const client = new MemoryLanguageClient("memoryLs", "Memory LS", serverOptions, clientOptions);
    this.client = client;
    for (const method of this.notificationListeners.keys()) {
      this.forward(client, method);
    }
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Running) {
        this.setState({ kind: "running", python: command });
      } else if (event.newState === State.Stopped) {
        this.setState({ kind: "stopped", reason: "the language server stopped" });
      }
    });
    try {
      await client.start();
      this.setState({ kind: "running", python: command });
    } catch (error) {
      const message = `Memory LS: the language server did not start with ${command}: ${errorText(error)}`;
      this.output.error(message);
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.setState({ kind: "stopped", reason: message });
      void this.offer({ kind: "failed", message, actions: ["show-output", "choose-python"] });
    }
  }

  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`Stopping the server: ${errorText(error)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.setState({ kind: "stopped", reason: "stopped" });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Tell the running server the settings changed (it pulls the new ones). */
  private async pushSettings(): Promise<void> {
    const client = this.client;
    if (client === undefined || client.state !== State.Running) {
      return;
    }
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { memoryLs: currentServerSettings(this.folder) },
    });
  }

  /** Call a server command; throws ServerCommandError with the server's message. */
  async call<K extends CommandName>(command: K, args: Commands[K][0]): Promise<Commands[K][1]> {
    return (await this.execute(command, [args])) as Commands[K][1];
  }

  /** Run any server command with its arguments (a code action's, say). */
  async execute(command: string, args: unknown[]): Promise<unknown> {
    await this.starting;
    const client = this.client;
    if (client === undefined || client.state !== State.Running) {
      const why = this.currentState.kind === "stopped" ? ` (${this.currentState.reason})` : "";
      throw new ServerCommandError(`The memory-ls language server is not running${why}.`, "not-running");
    }
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    } catch (error) {
      if (error instanceof ResponseError) {
        const data: unknown = error.data;
        const code =
          typeof data === "object" && data !== null && typeof (data as { code?: unknown }).code === "string"
            ? (data as { code: string }).code
            : undefined;
        throw new ServerCommandError(error.message, code);
      }
      throw new ServerCommandError(errorText(error), undefined);
    }
  }

  /** Listen to a notification of the server (every server this object starts). */
  onNotification(method: string, listener: (params: unknown) => void): vscode.Disposable {
    let listeners = this.notificationListeners.get(method);
    if (listeners === undefined) {
      listeners = new Set();
      this.notificationListeners.set(method, listeners);
      if (this.client !== undefined) {
        this.forward(this.client, method);
      }
    }
    listeners.add(listener);
    return new vscode.Disposable(() => listeners.delete(listener));
  }

  private forward(client: LanguageClient, method: string): void {
    client.onNotification(method, (params: unknown) => {
      for (const listener of this.notificationListeners.get(method) ?? []) {
        listener(params);
      }
    });
  }

  /** Send a custom request (one of the server's `memoryLs/…` methods). */
  async request<R>(method: string, params: unknown): Promise<R> {
    await this.starting;
    const client = this.client;
    if (client === undefined || client.state !== State.Running) {
      throw new ServerCommandError("The memory-ls language server is not running.", "not-running");
    }
    try {
      return await client.sendRequest<R>(method, params);
    } catch (error) {
      const data: unknown = error instanceof ResponseError ? error.data : undefined;
      const code =
        typeof data === "object" && data !== null && typeof (data as { code?: unknown }).code === "string"
          ? (data as { code: string }).code
          : undefined;
      throw new ServerCommandError(errorText(error), code);
    }
  }

  /** Show a start problem with buttons that fix it where possible. */
  private async offer(problem: StartProblem): Promise<void> {
    const labels = problem.actions.map((action) => ACTION_LABELS[action]);
    const picked = await vscode.window.showErrorMessage(problem.message, ...labels);
    const action = problem.actions.find((candidate) => ACTION_LABELS[candidate] === picked);
    switch (action) {
      case "choose-python":
        await openPythonSetting();
        break;
      case "select-interpreter":
        await vscode.commands.executeCommand("python.setInterpreter");
        break;
      case "show-output":
        this.output.show();
        break;
      default:
        break;
    }
  }

  dispose(): void {
    void this.stop();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
