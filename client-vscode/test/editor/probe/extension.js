// A test-only extension: it calls VS Code's language model tools API the way an agent in
// the editor does, and writes what it got to probe-result.json in the first workspace
// folder (the test reads it). The request comes from probe-request.json there.
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

function folder() {
  const first = vscode.workspace.workspaceFolders?.[0];
  if (!first) {
    throw new Error("no workspace folder");
  }
  return first.uri.fsPath;
}

function answer(result) {
  fs.writeFileSync(path.join(folder(), "probe-result.json"), JSON.stringify(result, null, 2));
}

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("memoryLsProbe.listTools", () => {
      answer({ tools: vscode.lm.tools.map((tool) => ({ name: tool.name, description: tool.description, tags: tool.tags })) });
    }),
    vscode.commands.registerCommand("memoryLsProbe.invokeTool", async () => {
      const request = JSON.parse(fs.readFileSync(path.join(folder(), "probe-request.json"), "utf8"));
      try {
        const result = await vscode.lm.invokeTool(request.name, { input: request.input, toolInvocationToken: undefined });
        const text = result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : JSON.stringify(part)));
        answer({ ok: true, text });
      } catch (error) {
        answer({ ok: false, error: String(error?.stack ?? error) });
      }
    }),
  );
}

module.exports = { activate };
