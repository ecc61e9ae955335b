// Which Python runs the bundled server, and what to tell the user when it cannot start.
// Pure: no `vscode` import, so Node's test runner can check it.
import * as path from "node:path";

export type PythonSource = "setting" | "python-extension" | "default";

export interface PythonChoice {
  /** The interpreter to run (a path, or a command looked up on PATH). */
  command: string;
  source: PythonSource;
}

export interface PythonInputs {
  /** `memoryLs.server.pythonPath`. */
  setting?: string | undefined;
  /** The Python extension's active interpreter, when that extension is installed. */
  pythonExtensionPath?: string | undefined;
  workspaceFolder?: string | undefined;
  home: string;
  platform: NodeJS.Platform;
}

/** The interpreter to use when nothing is configured. */
export function defaultPython(platform: NodeJS.Platform): string {
  return platform === "win32" ? "python" : "python3";
}

/** Expand `~`, `${userHome}` and `${workspaceFolder}` in a configured path. */
export function expandPath(text: string, inputs: Pick<PythonInputs, "home" | "workspaceFolder">): string {
  let result = text.trim();
  result = result.replace(/\$\{userHome\}/g, inputs.home);
  if (inputs.workspaceFolder !== undefined) {
    result = result.replace(/\$\{workspaceFolder\}/g, inputs.workspaceFolder);
  }
  if (result === "~") {
    return inputs.home;
  }
  if (result.startsWith("~/") || result.startsWith("~\\")) {
    return path.join(inputs.home, result.slice(2));
  }
  return result;
}

/**
 * The setting, else the Python extension's interpreter, else `python3` (`python` on
 * Windows). The Python extension answers a bare `python` when no interpreter is
 * selected: that is no choice, and it is often missing where `python3` exists.
 */
export function choosePython(inputs: PythonInputs): PythonChoice {
  const setting = inputs.setting?.trim();
  if (setting) {
    return { command: expandPath(setting, inputs), source: "setting" };
  }
  const fromExtension = inputs.pythonExtensionPath?.trim();
  if (fromExtension && fromExtension !== "python") {
    return { command: fromExtension, source: "python-extension" };
  }
  return { command: defaultPython(inputs.platform), source: "default" };
}

/** The launcher's path inside the extension (bundled/tool/server.py, next to bundled/libs). */
export function launcherPath(extensionPath: string): string {
  return path.join(extensionPath, "client-vscode", "bundled", "tool", "server.py");
}

/** The bundle's manifest (bundled/libs/bundle.json), written by scripts/bundle_server.py. */
export function bundleManifestPath(extensionPath: string): string {
  return path.join(extensionPath, "client-vscode", "bundled", "libs", "bundle.json");
}

/**
 * How the server is started: the bundled launcher in isolated mode (-I), so that neither
 * PYTHONPATH nor the user's site-packages can shadow the bundled libraries.
 */
export function serverCommand(choice: PythonChoice, launcher: string): { command: string; args: string[] } {
  return { command: choice.command, args: ["-I", launcher] };
}

/** The `memory-ls` launcher script for terminals: the bundled command line on the server's interpreter. */
export function launcherScript(python: string, launcher: string, windows: boolean): { name: string; text: string } {
  if (windows) {
    return { name: "memory-ls.cmd", text: `@echo off\r\n"${python}" -I "${launcher}" --cli %*\r\n` };
  }
  const quote = (text: string): string => `'${text.replace(/'/g, `'"'"'`)}'`;
  return {
    name: "memory-ls",
    text: [
      "#!/bin/sh",
      "# Written by the Memory LS extension: the memory-ls command line it carries.",
      `exec ${quote(python)} -I ${quote(launcher)} --cli "$@"`,
      "",
    ].join("\n"),
  };
}

/** Arguments that check an interpreter can run the bundled server. */
export function probeArgs(launcher: string): string[] {
  return ["-I", launcher, "--check"];
}

/** Exit status of the launcher when the bundle has no libraries for the interpreter. */
export const PROBE_UNSUPPORTED = 3;

/** What the launcher prints about the interpreter (one JSON line). */
export interface InterpreterInfo {
  python: string;
  implementation: string;
  executable: string;
  prefix: string;
  free_threaded: boolean;
  /** The server's version (with --check, when it can run). */
  memory_ls?: string;
  /** Python tags the bundle supports (`cp310`…), when this interpreter is not one. */
  supported?: string[];
}

/** The launcher's JSON line, if its output has one. */
export function parseInterpreterInfo(stdout: string): InterpreterInfo | undefined {
  const line = lastLine(stdout);
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value === "object" && value !== null && typeof (value as { python?: unknown }).python === "string") {
      return value as InterpreterInfo;
    }
  } catch {
    // not the launcher's output
  }
  return undefined;
}

/** "3.10–3.14" for ["cp310", "cp311", …, "cp314"]. */
export function versionRange(tags: readonly string[]): string {
  const versions = tags.map((tag) => `${tag.slice(2, 3)}.${tag.slice(3)}`);
  if (versions.length <= 1) {
    return versions[0] ?? "3";
  }
  return `${versions[0]}–${versions[versions.length - 1]}`;
}

export interface ProbeOutcome {
  /** Node's error code when the process could not be spawned (`ENOENT`, `EACCES`). */
  spawnError?: string | undefined;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export type ProblemKind = "no-python" | "failed";
export type Action = "choose-python" | "select-interpreter" | "show-output";

export interface StartProblem {
  kind: ProblemKind;
  message: string;
  actions: Action[];
}

export type ProbeVerdict = { ok: true; info: InterpreterInfo } | { ok: false; problem: StartProblem };

/** Where the interpreter came from, for messages. */
export function describeSource(choice: PythonChoice): string {
  switch (choice.source) {
    case "setting":
      return "the memoryLs.server.pythonPath setting";
    case "python-extension":
      return "the Python extension's selected interpreter";
    default:
      return "the default, as memoryLs.server.pythonPath is not set";
  }
}

function lastLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return lines[lines.length - 1] ?? "";
}

/**
 * Whether the interpreter can run the bundled server (from the launcher's --check);
 * when not, one message that says what to do, with buttons that help.
 */
export function judgeProbe(
  choice: PythonChoice,
  outcome: ProbeOutcome,
  options: { pythonExtension: boolean; supported: readonly string[] },
): ProbeVerdict {
  const chooser: Action[] = options.pythonExtension ? ["select-interpreter", "choose-python"] : ["choose-python"];
  const who = `${choice.command} (from ${describeSource(choice)})`;
  const info = parseInterpreterInfo(outcome.stdout);
  if (outcome.exitCode === 0 && info?.memory_ls !== undefined) {
    return { ok: true, info };
  }
  let what: string | undefined;
  if (outcome.spawnError !== undefined) {
    what = outcome.spawnError === "ENOENT" ? "was not found" : `could not be run (${outcome.spawnError})`;
  } else if (outcome.exitCode === PROBE_UNSUPPORTED && info !== undefined) {
    what = info.free_threaded
      ? `is a free-threaded build of Python ${info.python}`
      : `is ${info.implementation} ${info.python}`;
  }
  if (what !== undefined) {
    const range = versionRange(info?.supported ?? options.supported);
    const newest = versionRange((info?.supported ?? options.supported).slice(-1));
    return {
      ok: false,
      problem: {
        kind: "no-python",
        message: `Memory LS needs CPython ${range} to run its language server, and ${who} ${what}. Install CPython ${newest} (from python.org or your system's packages; nothing else is needed) and choose it.`,
        actions: chooser,
      },
    };
  }
  const detail =
    lastLine(outcome.stderr) ||
    (outcome.exitCode === null ? "the check was stopped (timed out?)" : `exit status ${outcome.exitCode}`);
  return {
    ok: false,
    problem: {
      kind: "failed",
      message: `Memory LS cannot start its language server with ${who}: ${detail}`,
      actions: ["show-output", ...chooser],
    },
  };
}
