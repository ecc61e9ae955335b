import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import {
  bundleManifestPath,
  choosePython,
  expandPath,
  judgeProbe,
  launcherPath,
  launcherScript,
  probeArgs,
  PROBE_UNSUPPORTED,
  serverCommand,
  versionRange,
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

  it("starts the bundled launcher in isolated mode", () => {
    const choice: PythonChoice = { command: "/v/bin/python", source: "setting" };
    const launcher = launcherPath("/ext");
    assert.equal(launcher, join("/ext", "client-vscode", "bundled", "tool", "server.py"));
    assert.deepEqual(serverCommand(choice, launcher), { command: "/v/bin/python", args: ["-I", launcher] });
    assert.deepEqual(probeArgs(launcher), ["-I", launcher, "--check"]);
  });
});

describe("versionRange", () => {
  it("names the first and last supported version", () => {
    assert.equal(versionRange(["cp310", "cp311", "cp312", "cp313"]), "3.10–3.13");
    assert.equal(versionRange(["cp313"]), "3.13");
  });
});

describe("judgeProbe", () => {
  const choice: PythonChoice = { command: "/v/bin/python", source: "setting" };
  const supported = ["cp310", "cp311", "cp312", "cp313", "cp314"];
  const options = { pythonExtension: false, supported };
  const info = { python: "3.12.1", implementation: "CPython", executable: "/v/bin/python", prefix: "/v", free_threaded: false };
  const ok = { exitCode: 0, stdout: `${JSON.stringify({ ...info, memory_ls: "0.1.0" })}\n`, stderr: "" };

  it("accepts an interpreter the launcher could run the server with", () => {
    const verdict = judgeProbe(choice, ok, options);
    assert.ok(verdict.ok);
    assert.equal(verdict.info.memory_ls, "0.1.0");
    assert.equal(verdict.info.prefix, "/v");
  });

  it("says what to install when the interpreter is missing, offering to choose one", () => {
    const verdict = judgeProbe(choice, { ...ok, spawnError: "ENOENT", exitCode: null }, { ...options, pythonExtension: true });
    assert.ok(!verdict.ok);
    assert.equal(verdict.problem.kind, "no-python");
    assert.match(
      verdict.problem.message,
      /^Memory LS needs CPython 3\.10–3\.14 .*\/v\/bin\/python .*memoryLs\.server\.pythonPath.* was not found\. Install CPython 3\.14 /,
    );
    assert.deepEqual(verdict.problem.actions, ["select-interpreter", "choose-python"]);
  });

  it("gives the same message, with the version, for a Python the bundle has no libraries for", () => {
    const stdout = JSON.stringify({ ...info, python: "3.9.18", supported: supported.slice(0, 4) });
    const verdict = judgeProbe(choice, { exitCode: PROBE_UNSUPPORTED, stdout, stderr: "" }, options);
    assert.ok(!verdict.ok);
    assert.equal(verdict.problem.kind, "no-python");
    assert.match(verdict.problem.message, /needs CPython 3\.10–3\.13 .* is CPython 3\.9\.18\. Install CPython 3\.13 /);
    assert.deepEqual(verdict.problem.actions, ["choose-python"]);
    const threaded = JSON.stringify({ ...info, python: "3.13.0", free_threaded: true, supported });
    const second = judgeProbe(choice, { exitCode: PROBE_UNSUPPORTED, stdout: threaded, stderr: "" }, options);
    assert.ok(!second.ok);
    assert.match(second.problem.message, /is a free-threaded build of Python 3\.13\.0/);
  });

  it("shows the last line of any other failure", () => {
    const verdict = judgeProbe(
      choice,
      { exitCode: 1, stdout: "", stderr: "Traceback\nImportError: cannot import name 'x'\n\n" },
      options,
    );
    assert.ok(!verdict.ok);
    assert.equal(verdict.problem.kind, "failed");
    assert.match(verdict.problem.message, /ImportError: cannot import name 'x'$/);
    assert.deepEqual(verdict.problem.actions, ["show-output", "choose-python"]);
  });
});

describe("the launcher (client-vscode/bundled/tool/server.py) with python3", () => {
  const python = spawnSync("python3", ["--version"]).status === 0 ? "python3" : undefined;
  const repo = resolve(__dirname, "..", "..", "..");
  const bundled = existsSync(bundleManifestPath(repo));

  it("reports an interpreter the bundle was not built for", { skip: python === undefined }, () => {
    // A copy of the launcher next to a bundle that supports no Python that exists.
    const extension = mkdtempSync(join(tmpdir(), "memory-ls-launcher-"));
    try {
      const launcher = launcherPath(extension);
      mkdirSync(dirname(launcher), { recursive: true });
      copyFileSync(launcherPath(repo), launcher);
      mkdirSync(dirname(bundleManifestPath(extension)), { recursive: true });
      writeFileSync(bundleManifestPath(extension), JSON.stringify({ pythons: ["cp30"], native: [], target: "x" }));
      const run = spawnSync(python as string, probeArgs(launcher), { encoding: "utf8" });
      const verdict = judgeProbe({ command: "python3", source: "default" }, { exitCode: run.status, stdout: run.stdout, stderr: run.stderr }, { pythonExtension: false, supported: ["cp30"] });
      assert.ok(!verdict.ok, run.stdout);
      assert.equal(verdict.problem.kind, "no-python", run.stderr);
      assert.match(verdict.problem.message, /needs CPython 3\.0 .* is CPython 3\.\d+\.\d+\./);
    } finally {
      rmSync(extension, { recursive: true, force: true });
    }
  });

  it("the terminal's memory-ls script runs the bundled command line", { skip: python === undefined || !bundled }, () => {
    const directory = mkdtempSync(join(tmpdir(), "memory-ls-bin-"));
    try {
      const script = launcherScript(python as string, launcherPath(repo), false);
      assert.equal(script.name, "memory-ls");
      const file = join(directory, script.name);
      writeFileSync(file, script.text, { mode: 0o755 });
      const run = spawnSync(file, ["--version"], { encoding: "utf8", env: { ...process.env, PYTHONPATH: "/nonexistent" } });
      const manifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string };
      assert.equal(run.stdout.trim(), `memory-ls ${manifest.version}`, run.stderr);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("quotes the paths of the launcher script", () => {
    const unix = launcherScript("/opt/it's/python3", "/ext/server.py", false);
    assert.match(unix.text, /^exec '\/opt\/it'"'"'s\/python3' -I '\/ext\/server\.py' --cli "\$@"$/m);
    const windows = launcherScript("C:\\Python\\python.exe", "C:\\ext\\server.py", true);
    assert.equal(windows.name, "memory-ls.cmd");
    assert.match(windows.text, /"C:\\Python\\python\.exe" -I "C:\\ext\\server\.py" --cli %\*/);
  });

  it("runs the bundled server's check", { skip: python === undefined || !bundled }, () => {
    const run = spawnSync(python as string, probeArgs(launcherPath(repo)), {
      encoding: "utf8",
      // Nothing from the environment reaches the isolated launcher.
      env: { ...process.env, PYTHONPATH: "/nonexistent" },
    });
    const verdict = judgeProbe({ command: "python3", source: "default" }, { exitCode: run.status, stdout: run.stdout, stderr: run.stderr }, { pythonExtension: false, supported: [] });
    assert.ok(verdict.ok, run.stderr);
    const manifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string };
    assert.equal(verdict.info.memory_ls, manifest.version);
  });
});
