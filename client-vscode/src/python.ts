// Which Python runs the server, and what to tell the user when it cannot start.
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

/** How the server is started with a chosen interpreter. */
export function serverCommand(choice: PythonChoice): { command: string; args: string[] } {
  return { command: choice.command, args: ["-m", "memory_ls"] };
}

/** Exit status of the probe when the interpreter is older than the server supports. */
export const PROBE_TOO_OLD = 3;

/** Arguments that check an interpreter can run the server; prints the memory-ls version. */
export function probeArgs(): string[] {
  return [
    "-c",
    [
      "import sys",
      `if sys.version_info < (3, 10): print(sys.version.split()[0]); sys.exit(${PROBE_TOO_OLD})`,
      "import memory_ls, memory_ls.__main__",
      "print(memory_ls.__version__)",
    ].join("\n"),
  ];
}

export interface ProbeOutcome {
  /** Node's error code when the process could not be spawned (`ENOENT`, `EACCES`). */
  spawnError?: string | undefined;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export type ProblemKind = "no-python" | "too-old" | "not-installed" | "failed";
export type Action = "choose-python" | "select-interpreter" | "install" | "show-output";

export interface StartProblem {
  kind: ProblemKind;
  message: string;
  actions: Action[];
}

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
 * What went wrong when probing an interpreter, with what the user can do about it;
 * undefined when the interpreter can run the server.
 */
export function diagnoseProbe(
  choice: PythonChoice,
  outcome: ProbeOutcome,
  options: { pythonExtension: boolean },
): StartProblem | undefined {
  const chooser: Action[] = options.pythonExtension ? ["select-interpreter", "choose-python"] : ["choose-python"];
  const who = `${choice.command} (from ${describeSource(choice)})`;
  if (outcome.spawnError !== undefined) {
    const why = outcome.spawnError === "ENOENT" ? "was not found" : `could not be run (${outcome.spawnError})`;
    return {
      kind: "no-python",
      message: `Memory LS cannot start its language server: the Python interpreter ${who} ${why}. Install Python 3.10 or newer, or choose an interpreter.`,
      actions: chooser,
    };
  }
  if (outcome.exitCode === 0) {
    return undefined;
  }
  if (outcome.exitCode === PROBE_TOO_OLD) {
    return {
      kind: "too-old",
      message: `Memory LS cannot start its language server: ${who} is Python ${outcome.stdout.trim()}, and memory-ls needs Python 3.10 or newer. Choose a newer interpreter.`,
      actions: chooser,
    };
  }
  if (/No module named '?memory_ls/.test(outcome.stderr)) {
    return {
      kind: "not-installed",
      message: `Memory LS cannot start its language server: the memory-ls package is not installed for ${who}. Install it (python -m pip install memory-ls) or choose an interpreter that has it.`,
      actions: ["install", ...chooser],
    };
  }
  const detail =
    lastLine(outcome.stderr) ||
    (outcome.exitCode === null ? "the check was stopped (timed out?)" : `exit status ${outcome.exitCode}`);
  return {
    kind: "failed",
    message: `Memory LS cannot start its language server with ${who}: ${detail}`,
    actions: ["show-output", ...chooser],
  };
}

/** The command that installs the server into an interpreter (run in a terminal or task). */
export function installCommand(choice: PythonChoice): { command: string; args: string[] } {
  return { command: choice.command, args: ["-m", "pip", "install", "memory-ls"] };
}
