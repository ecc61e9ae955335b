import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import {
  choosePython,
  diagnoseProbe,
  expandPath,
  installCommand,
  probeArgs,
  PROBE_TOO_OLD,
  serverCommand,
  type PythonChoice,
} from "../../src/python";

const base = { home: "/home/ada", platform: "linux" as NodeJS.Platform, workspaceFolder: "/work/repo" };

describe("choosePython", () => {
  it("prefers the setting, expanded", () => {
    assert.deepEqual(
      choosePython({ ...base, setting: "${workspaceFolder}/.venv/bin/python", pythonExtensionPath: "/usr/bin/python3.12" }),
      { command: "/work/repo/.venv/bin/python", source: "setting" },
    );
    assert.deepEqual(choosePython({ ...base, setting: " ~/py/bin/python " }), {
      command: "/home/ada/py/bin/python",
      source: "setting",
    });
  });

  it("uses the Python extension's interpreter when the setting is empty", () => {
    assert.deepEqual(choosePython({ ...base, setting: "  ", pythonExtensionPath: "/opt/venv/bin/python" }), {
      command: "/opt/venv/bin/python",
      source: "python-extension",
    });
  });

  it("ignores the Python extension's bare 'python' (nothing selected)", () => {
    assert.deepEqual(choosePython({ ...base, pythonExtensionPath: "python" }), { command: "python3", source: "default" });
  });

  it("falls back to python3, or python on Windows", () => {
    assert.deepEqual(choosePython(base), { command: "python3", source: "default" });
    assert.deepEqual(choosePython({ ...base, platform: "win32" }), { command: "python", source: "default" });
  });

  it("expands ${userHome} and leaves unknown variables", () => {
    assert.equal(expandPath("${userHome}/x/${other}", base), "/home/ada/x/${other}");
    assert.equal(expandPath("${workspaceFolder}/p", { home: "/h", workspaceFolder: undefined }), "${workspaceFolder}/p");
  });

  it("starts the server as python -m memory_ls and installs with pip", () => {
    const choice: PythonChoice = { command: "/v/bin/python", source: "setting" };
    assert.deepEqual(serverCommand(choice), { command: "/v/bin/python", args: ["-m", "memory_ls"] });
    assert.deepEqual(installCommand(choice), { command: "/v/bin/python", args: ["-m", "pip", "install", "memory-ls"] });
  });
});

describe("diagnoseProbe", () => {
  const choice: PythonChoice = { command: "/v/bin/python", source: "setting" };
  const ok = { exitCode: 0, stdout: "0.1.0\n", stderr: "" };

  it("finds nothing wrong when the probe succeeds", () => {
    assert.equal(diagnoseProbe(choice, ok, { pythonExtension: false }), undefined);
  });

  it("says the interpreter is missing, offering to choose one", () => {
    const problem = diagnoseProbe(choice, { ...ok, spawnError: "ENOENT", exitCode: null }, { pythonExtension: true });
    assert.equal(problem?.kind, "no-python");
    assert.match(problem?.message ?? "", /\/v\/bin\/python .*memoryLs\.server\.pythonPath.* was not found/);
    assert.deepEqual(problem?.actions, ["select-interpreter", "choose-python"]);
  });

  it("offers to install memory-ls when the module is missing", () => {
    const stderr = 'Traceback (most recent call last):\n  File "<string>", line 3\nModuleNotFoundError: No module named \'memory_ls\'\n';
    const problem = diagnoseProbe({ command: "python3", source: "default" }, { exitCode: 1, stdout: "", stderr }, { pythonExtension: false });
    assert.equal(problem?.kind, "not-installed");
    assert.match(problem?.message ?? "", /pip install memory-ls/);
    assert.deepEqual(problem?.actions, ["install", "choose-python"]);
  });

  it("reports an old Python with its version", () => {
    const problem = diagnoseProbe(choice, { exitCode: PROBE_TOO_OLD, stdout: "3.8.10\n", stderr: "" }, { pythonExtension: false });
    assert.equal(problem?.kind, "too-old");
    assert.match(problem?.message ?? "", /Python 3\.8\.10.*3\.10 or newer/);
  });

  it("shows the last line of any other failure", () => {
    const problem = diagnoseProbe(choice, { exitCode: 1, stdout: "", stderr: "Traceback\nImportError: cannot import name 'x'\n\n" }, { pythonExtension: false });
    assert.equal(problem?.kind, "failed");
    assert.match(problem?.message ?? "", /ImportError: cannot import name 'x'$/);
    assert.deepEqual(problem?.actions, ["show-output", "choose-python"]);
  });
});

describe("probeArgs", () => {
  const python = spawnSync("python3", ["--version"]).status === 0 ? "python3" : undefined;

  it("fails with 'No module named' for a module-less interpreter", { skip: python === undefined }, () => {
    // Run the probe with an empty module path: memory_ls cannot be found.
    const run = spawnSync(python as string, ["-I", "-S", ...probeArgs()], { encoding: "utf8" });
    const problem = diagnoseProbe(
      { command: "python3", source: "default" },
      { exitCode: run.status, stdout: run.stdout, stderr: run.stderr },
      { pythonExtension: false },
    );
    assert.equal(problem?.kind, "not-installed", run.stderr);
  });
});
