// The editor side of choosing Python: the setting, the Python extension's API, and a
// probe that the interpreter can run the server. The decisions are in ./python.
import { execFile } from "node:child_process";
import * as os from "node:os";
import * as vscode from "vscode";
import { choosePython, diagnoseProbe, probeArgs, type PythonChoice, type StartProblem } from "./python";

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

/** Check that the interpreter runs and has memory-ls; the problem when it does not. */
export function probe(interpreter: Interpreter, cwd: string | undefined): Promise<StartProblem | undefined> {
  return new Promise((resolve) => {
    execFile(
      interpreter.choice.command,
      probeArgs(),
      { cwd, timeout: PROBE_TIMEOUT_MS, windowsHide: true },
      (error, stdout, stderr) => {
        const spawnError =
          error !== null && typeof error.code === "string" ? error.code : undefined;
        const exitCode = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve(
          diagnoseProbe(
            interpreter.choice,
            { spawnError, exitCode, stdout: String(stdout), stderr: String(stderr) },
            { pythonExtension: interpreter.pythonExtension },
          ),
        );
      },
    );
  });
}
