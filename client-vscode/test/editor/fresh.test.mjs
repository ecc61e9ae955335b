// A new user's machine: the VSIX installed into a fresh code-server, a python3 that has
// never seen memory-ls (a new venv without pip), pip unable to reach any index, no
// memoryLs settings, and the example workspace opened as it is. The bundled server must
// start with that python3 and complete memory names after [[; and VS Code itself must
// start the `memory-ls mcp` server the extension registers (MCP server definition API)
// on that python3, from the VSIX's bundle alone (the MCP SDK, pydantic… are in it), list
// its tools and answer a tool call made through its language model tools API (by the
// test's probe extension, as an agent in the editor calls it).
//   node --test client-vscode/test/editor/fresh.test.mjs   (see client-vscode/scripts/test-all.sh)
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  closeQuickInput,
  escapeRegExp,
  evidence,
  expectSuggestions,
  extensionLog,
  openBrowser,
  openFile,
  pythonForServer,
  quickPickRow,
  repo,
  retry,
  runCommand,
  screenshot,
  startCodeServer,
} from "./harness.mjs";

const artifacts =
  process.env.MEMORY_LS_ARTIFACTS || join(repo, "client-vscode", "test-results", `fresh-${Date.now()}`);

/** Run a probe command (test/editor/probe) and return what it wrote into the workspace. */
async function probe(page, workspace, title, request) {
  const result = join(workspace, "probe-result.json");
  rmSync(result, { force: true });
  if (request !== undefined) {
    writeFileSync(join(workspace, "probe-request.json"), JSON.stringify(request));
  }
  await runCommand(page, `Probe: ${title}`);
  return retry(() => JSON.parse(readFileSync(result, "utf8")), { timeout: 30_000, what: `the probe's answer to ${title}` });
}

/**
 * The running processes whose command line holds every one of `parts` (pid, argv), but
 * not their children of the same command line (memory-ls mcp forks a helper at start).
 */
function processesWith(...parts) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(join("/proc", pid, "cmdline"), "utf8").split("\0").filter(Boolean);
      // The parent's pid is the 2nd field after the command's name in parentheses.
      const parent = readFileSync(join("/proc", pid, "stat"), "utf8").replace(/^.*\) /s, "").split(" ")[1];
      if (parts.every((part) => argv.includes(part))) {
        found.push({ pid, parent, argv });
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return found.filter(({ parent }) => !found.some(({ pid }) => pid === parent));
}

/** The first `command` on a PATH, as a spawn without a shell finds it. */
function onPath(command, path) {
  for (const folder of path.split(":")) {
    if (folder && existsSync(join(folder, command))) {
      return join(folder, command);
    }
  }
  return undefined;
}

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
      // The probe calls VS Code's language model tools as an agent does; tool calls made
      // outside a chat are not held for a confirmation in the test.
      probe: true,
      userSettings: { "chat.tools.autoApprove": true },
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

  it("VS Code starts the registered memory-ls MCP server on the bare python3, from the VSIX's bundle, and lists its tools", { timeout: 240_000 }, async () => {
    try {
      // VS Code starts the server from the extension's definition (MCP: List Servers, then
      // Start Server), as it does when an agent first needs its tools.
      await retry(
        async () => {
          await runCommand(page, "MCP: List Servers", { timeout: 10_000 });
          await quickPickRow(page, "memory-ls").first().waitFor({ state: "visible", timeout: 3000 });
        },
        { timeout: 90_000, what: "memory-ls among VS Code's MCP servers" },
      );
      await quickPickRow(page, "memory-ls").first().click();
      const start = quickPickRow(page, "Start Server");
      if (await start.first().isVisible({ timeout: 5000 }).catch(() => false)) {
        await start.first().click();
      }
      await closeQuickInput(page);
      // Its tools, as VS Code lists them to agents: only a running server could give them.
      let tools = [];
      await retry(
        async () => {
          ({ tools } = await probe(page, session.workspace, "List Language Model Tools"));
          assert.ok(
            tools.some((tool) => /list_memories$/.test(tool.name)),
            `no list_memories among ${tools.map((tool) => tool.name).join(", ")}`,
          );
        },
        { timeout: 120_000, what: "the memory tools among VS Code's language model tools" },
      );
      const names = tools.map((tool) => tool.name);
      for (const expected of ["write_memory", "read_memory", "list_memories", "search_memories"]) {
        assert.ok(names.some((name) => name.endsWith(expected)), `${expected} not among ${names.join(", ")}`);
      }
      // A tool call through VS Code reaches the server and lists the example's memories.
      const list = tools.find((tool) => /list_memories$/.test(tool.name));
      const answer = await probe(page, session.workspace, "Invoke Language Model Tool", { name: list.name, input: {} });
      assert.ok(answer.ok, answer.error);
      assert.match(answer.text.join("\n"), /project_overview/);
      // The server VS Code started is the extension's command line: the bare python3
      // (found on the editor's PATH) running the VSIX's launcher, the MCP SDK and its
      // native pydantic-core loaded from the VSIX's bundle (that python3 has neither).
      const launcher = readdirSync(join(session.temp, "extensions"))
        .filter((name) => name.startsWith("memory-ls.memory-ls-"))
        .map((name) => join(session.temp, "extensions", name, "client-vscode", "bundled", "tool", "server.py"))[0];
      assert.ok(launcher && existsSync(launcher), `the installed extension's launcher (${launcher})`);
      const running = processesWith(launcher, "--cli", "mcp");
      assert.equal(running.length, 1, `one memory-ls mcp process, found ${JSON.stringify(running)}`);
      const [{ pid, argv }] = running;
      assert.deepEqual(argv.slice(0, 5), ["python3", "-I", launcher, "--cli", "mcp"]);
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      const path = (environ.find((entry) => entry.startsWith("PATH=")) ?? "PATH=").slice(5);
      assert.equal(onPath("python3", path), join(clean, "bin", "python3"), "the python3 the server runs on");
      const maps = readFileSync(`/proc/${pid}/maps`, "utf8");
      const bundled = join(launcher, "..", "..", "libs");
      assert.match(maps, new RegExp(`${escapeRegExp(bundled)}/cp3\\d+/pydantic_core/_pydantic_core\\.`));
      await evidence(page, artifacts, "fresh-mcp-tools");
      const prefix = list.name.slice(0, -"list_memories".length);
      const ours = names.filter((name) => name.startsWith(prefix));
      console.log(`VS Code started memory-ls mcp (pid ${pid}) on ${join(clean, "bin", "python3")}: ${ours.join(", ")}`);
    } catch (error) {
      failed = true;
      if (page) {
        await screenshot(page, artifacts, "fresh-mcp").catch(() => undefined);
      }
      console.log(extensionLog(session?.userData ?? machine));
      throw error;
    }
  });
});
