import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { agentName, CONTEXT_AGENTS, contextRows, isContextAgent, tokens } from "../../src/contextRows";
import type { ContextFile, ContextResult } from "../../src/protocol";

function file(shown: string, tokenCount: number, extra: Partial<ContextFile> = {}): ContextFile {
  return {
    path: `/work/repo/${shown}`,
    shown,
    kind: "project",
    why: "the project's instructions",
    tokens: tokenCount,
    loadedBytes: tokenCount * 4,
    totalBytes: tokenCount * 4,
    depth: 0,
    importedBy: null,
    cut: null,
    headroom: null,
    ...extra,
  };
}

function result(extra: Partial<ContextResult> = {}): ContextResult {
  return {
    agent: "claude",
    agentName: "Claude Code",
    root: "/work/repo",
    file: "src/api/server.ts",
    budget: 20_000,
    total: 4080,
    overBudget: false,
    tokensPerCharacter: 0.25,
    loaded: [],
    optional: [],
    skipped: [],
    notes: [],
    ...extra,
  };
}

const CUT = {
  by: "lines" as const,
  line: 201,
  column: 0,
  loadedLines: 200,
  totalLines: 240,
  loadedBytes: 9000,
  totalBytes: 10_000,
  text: "lines 1–200 of 240 loaded; 40 lines not loaded",
};

describe("the rows of What the Agent Loads", () => {
  it("lists the total against the budget first, then the files in load order", () => {
    const rows = contextRows(
      result({
        loaded: [
          file("CLAUDE.md", 850),
          file("docs/setup.md", 310, { depth: 1, importedBy: "CLAUDE.md", kind: "import" }),
          file("~/.claude/projects/-work-repo/memory/MEMORY.md", 2920, {
            path: "/home/ada/.claude/projects/-work-repo/memory/MEMORY.md",
            cut: CUT,
          }),
        ],
      }),
    );
    assert.deepEqual(
      rows.map((row) => [row.kind, row.label, row.description]),
      [
        ["total", "Total: 4,080 of 20,000 tokens (20%)", ""],
        ["file", "CLAUDE.md", "850 tokens"],
        ["file", "docs/setup.md", "310 tokens"],
        [
          "file",
          "~/.claude/projects/-work-repo/memory/MEMORY.md",
          "2,920 tokens · cut: lines 1–200 of 240 loaded; 40 lines not loaded",
        ],
      ],
    );
    assert.equal(rows[0]?.icon, "pass");
    assert.match(rows[0]?.tooltip ?? "", /^Claude Code loads 3 files working on src\/api\/server\.ts/);
    // A click opens the file; a cut file where the agent stops reading (0-based line).
    assert.deepEqual(rows[1]?.open, { path: "/work/repo/CLAUDE.md" });
    assert.deepEqual(rows[3]?.open, { path: "/home/ada/.claude/projects/-work-repo/memory/MEMORY.md", line: 200, column: 0 });
    assert.equal(rows[3]?.warning, true);
    assert.match(rows[2]?.tooltip ?? "", /Imported by CLAUDE\.md\./);
    assert.equal(rows[2]?.icon, "arrow-small-right");
  });

  it("says how far over the budget a total is", () => {
    const [total] = contextRows(result({ total: 25_000, overBudget: true, file: null }));
    assert.equal(total?.label, "Total: 25,000 of 20,000 tokens (125%)");
    assert.equal(total?.description, "5,000 over the budget");
    assert.equal(total?.warning, true);
    assert.match(total?.tooltip ?? "", /at the start of a session, before any file is touched/);
  });

  it("groups the rules the agent may choose and the files it does not load", () => {
    const rows = contextRows(
      result({
        agent: "cursor",
        agentName: "Cursor",
        loaded: [file(".cursor/rules/style.mdc", 40)],
        optional: [file(".cursor/rules/db.mdc", 90)],
        skipped: [
          { path: "/work/repo/docs/gone.md", shown: "docs/gone.md", reason: "missing", detail: "does not exist", importedBy: "CLAUDE.md" },
          { path: "/work/repo/.cursor/rules/web.mdc", shown: ".cursor/rules/web.mdc", reason: "not-matched", detail: "globs do not match", importedBy: null },
        ],
      }),
    );
    assert.deepEqual(
      rows.map((row) => row.label),
      ["Total: 4,080 of 20,000 tokens (20%)", ".cursor/rules/style.mdc", "May be chosen by the agent (1)", "Not loaded (2)"],
    );
    assert.deepEqual(rows[2]?.children?.map((row) => [row.kind, row.label]), [["optional", ".cursor/rules/db.mdc"]]);
    const [missing, unmatched] = rows[3]?.children ?? [];
    assert.equal(missing?.open, undefined);
    assert.deepEqual(unmatched?.open, { path: "/work/repo/.cursor/rules/web.mdc" });
    assert.equal(unmatched?.description, "globs do not match");
  });

  it("shows Serena's memory names without a file to open", () => {
    const [, names] = contextRows(
      result({
        agent: "serena",
        agentName: "Serena",
        loaded: [file(".serena/memories (2 names)", 30, { kind: "memory-names", names: ["architecture", "style"] })],
      }),
    );
    assert.equal(names?.open, undefined);
    assert.equal(names?.icon, "list-flat");
    assert.match(names?.tooltip ?? "", /architecture, style$/);
  });

  it("knows the six agents", () => {
    assert.deepEqual(
      CONTEXT_AGENTS.map((agent) => agent.id),
      ["claude", "codex", "cursor", "copilot", "serena", "aicoder"],
    );
    assert.equal(isContextAgent("codex"), true);
    assert.equal(isContextAgent("windsurf"), false);
    assert.equal(agentName("copilot"), "GitHub Copilot");
    assert.equal(tokens(1), "1 token");
    assert.equal(tokens(12_345), "12,345 tokens");
  });
});
