// The editor side of choosing Python: the setting, the Python extension's API, and a
// probe that the interpreter can run the server. The decisions are in ./python.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import * as os from "node:os";
import * as vscode from "vscode";
import {
  bundleManifestPath,
  choosePython,
  judgeProbe,
  launcherPath,
  probeArgs,
  type ProbeVerdict,
  type PythonChoice,
} from "./python";

const PYTHON_EXTENSION_ID = "ms-python.python";
const PROBE_TIMEOUT_MS = 30_000;

/** The part of the Python extension's API used here (`environments`). */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string } | undefined;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
}

async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch {
    return undefined;
  }
}

export function workspaceRoot(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

export interface Interpreter {
  choice: PythonChoice;
  /** Whether the Python extension is installed (it can select an interpreter). */
  pythonExtension: boolean;
}

/** The interpreter the server should run with now. */
export async function findInterpreter(): Promise<Interpreter> {
  const folder = workspaceRoot();
  const setting = vscode.workspace.getConfiguration("memoryLs", folder).get<string>("server.pythonPath");
  const api = setting?.trim() ? undefined : await pythonExtensionApi();
  const pythonExtension = vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
  let fromExtension: string | undefined;
  try {
    fromExtension = api?.environments?.getActiveEnvironmentPath(folder?.uri)?.path;
  } catch {
    fromExtension = undefined;
  }
  const choice = choosePython({
    setting,
    pythonExtensionPath: fromExtension,
    workspaceFolder: folder?.uri.fsPath,
    home: os.homedir(),
    platform: process.platform,
  });
  return { choice, pythonExtension };
}

/** Calls back when the Python extension's selected interpreter changes. */
export async function onPythonExtensionChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await pythonExtensionApi();
  return api?.environments?.onDidChangeActiveEnvironmentPath?.(() => listener());
}

/** The Python tags (`cp310`…) the bundled libraries are built for; throws when there is no bundle. */
async function bundledPythons(extensionPath: string): Promise<string[]> {
  const manifest = bundleManifestPath(extensionPath);
  try {
    const bundle = JSON.parse(await readFile(manifest, "utf8")) as { pythons?: unknown };
    if (Array.isArray(bundle.pythons) && bundle.pythons.every((tag) => typeof tag === "string")) {
      return bundle.pythons as string[];
    }
  } catch {
    // reported below
  }
  throw new Error(
    `this build of Memory LS carries no language server (${manifest} is missing or unreadable); build the VSIX with npm run package`,
  );
}

/** Check that the interpreter can run the bundled server: its description, or the problem. */
export async function probe(interpreter: Interpreter, cwd: string | undefined, extensionPath: string): Promise<ProbeVerdict> {
  let supported: string[];
  try {
    supported = await bundledPythons(extensionPath);
  } catch (error) {
    const message = `Memory LS cannot start its language server: ${error instanceof Error ? error.message : String(error)}`;
    return { ok: false, problem: { kind: "failed", message, actions: ["show-output"] } };
  }
  return new Promise((resolve) => {
    execFile(
      interpreter.choice.command,
      probeArgs(launcherPath(extensionPath)),
      { cwd, timeout: PROBE_TIMEOUT_MS, windowsHide: true },
      (error, stdout, stderr) => {
        const spawnError =
          error !== null && typeof error.code === "string" ? error.code : undefined;
        const exitCode = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve(
          judgeProbe(
            interpreter.choice,
            { spawnError, exitCode, stdout: String(stdout), stderr: String(stderr) },
            { pythonExtension: interpreter.pythonExtension, supported },
          ),
        );
      },
    );
  });
}

/** Open the settings editor on memoryLs.server.pythonPath, in the tab that can set it. */
export async function openPythonSetting(): Promise<void> {
  const query = "@id:memoryLs.server.pythonPath";
  // The setting is machine-overridable: in a remote window (code-server, SSH, WSL) the
  // User tab leaves it out ("No Settings Found") and the Remote tab has it.
  if (vscode.env.remoteName) {
    await vscode.commands.executeCommand("workbench.action.openRemoteSettings", { query });
  } else {
    await vscode.commands.executeCommand("workbench.action.openSettings", query);
  }
}
