// A new user's machine: the VSIX installed into a fresh code-server, a python3 that has
// never seen memory-ls (a new venv without pip), pip unable to reach any index, no
// memoryLs settings, and the example workspace opened as it is. The bundled server must
// start with that python3 and complete memory names after [[.
//   node --test client-vscode/test/editor/fresh.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { escapeRegExp, expectSuggestions, extensionLog, openBrowser, openFile, pythonForServer, repo, screenshot, startCodeServer } from "./harness.mjs";

const artifacts =
  process.env.MEMORY_LS_ARTIFACTS || join(repo, "client-vscode", "test-results", `fresh-${Date.now()}`);

describe("a fresh machine: the VSIX alone, a bare python3, no network for pip", { timeout: 10 * 60_000 }, () => {
  let machine;
  let clean;
  let session;
  let browser;
  let page;
  let failed = false;

  before(() => {
    machine = mkdtempSync(join(tmpdir(), "memory-ls-fresh-"));
    // A new venv of the base interpreter (not the project's .venv): no memory_ls, no
    // pygls, and no pip to install anything with.
    const base = execFileSync(pythonForServer(), ["-c", "import sys; print(sys._base_executable)"], {
      encoding: "utf8",
    }).trim();
    clean = join(machine, "python");
    execFileSync(base, ["-m", "venv", "--without-pip", clean]);
    for (const module of ["memory_ls", "pygls", "pip"]) {
      const run = spawnSync(join(clean, "bin", "python3"), ["-c", `import ${module}`], { encoding: "utf8" });
      assert.notEqual(run.status, 0, `the clean interpreter can import ${module}`);
    }
    // code-server gives extensions the environment of a login shell, whose /etc/profile
    // sets PATH again: the editor's own HOME has a .profile that puts this python3 first.
    const home = join(machine, "home");
    mkdirSync(home);
    const offline = {
      PIP_NO_INDEX: "1",
      PIP_INDEX_URL: "http://127.0.0.1:9/simple",
      PIP_FIND_LINKS: "/nonexistent",
      PIP_CONFIG_FILE: "/dev/null",
    };
    const exports = Object.entries(offline).map(([key, value]) => `export ${key}=${value}`);
    writeFileSync(join(home, ".profile"), [`export PATH="${join(clean, "bin")}:$PATH"`, ...exports, ""].join("\n"));
    const shell = spawnSync("bash", ["-lc", "command -v python3"], {
      encoding: "utf8",
      env: { ...process.env, HOME: home },
    });
    assert.equal(shell.stdout.trim(), join(clean, "bin", "python3"), "python3 in the editor's login shell");
    return startCodeServer({
      workspace: join(repo, "examples", "workspace"),
      python: null,
      home,
      env: { ...offline, PYTHONPATH: undefined, VIRTUAL_ENV: undefined, PYTHONHOME: undefined },
    }).then(async (started) => {
      session = started;
      // A file that names no memory, so that suggestions can only come from the server.
      writeFileSync(join(session.workspace, "scratch.md"), "# Scratch\n");
      ({ browser, page } = await openBrowser(session.url));
    });
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await session?.stop({ keep: failed || process.env.MEMORY_LS_KEEP === "1" });
    if (failed) {
      console.log(`Fresh-machine test failed: screenshots in ${artifacts}; kept ${session?.temp} and ${machine}`);
    } else {
      rmSync(machine, { recursive: true, force: true });
    }
  });

  it("completion after [[ lists the example's memories, served by the bundled server on the bare python3", { timeout: 180_000 }, async () => {
    try {
      await openFile(page, "scratch.md");
      await page.keyboard.press("Control+End");
      await page.keyboard.type("See [[");
      await expectSuggestions(page, ["architecture_notes", "project_overview", "style_guide"], {
        timeout: 90_000,
        what: "the example's memory names in the suggest widget",
      });
      // The server that answered runs on the clean interpreter, chosen as the default python3.
      const log = extensionLog(session.userData);
      assert.match(log, /Python: python3 \(default\)/);
      assert.match(log, new RegExp(`Bundled memory-ls \\S+ on CPython 3\\.\\d+\\.\\d+ \\(.*, prefix ${escapeRegExp(clean)}\\)`));
    } catch (error) {
      failed = true;
      if (page) {
        await screenshot(page, artifacts, "fresh-completion").catch(() => undefined);
      }
      console.log(extensionLog(session?.userData ?? machine));
      throw error;
    }
  });
});
