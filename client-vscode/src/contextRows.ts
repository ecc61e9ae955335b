// The rows of the "What the Agent Loads" view, from the server's `memory.context`: the
// total against the budget first, then the files in load order, then the rules the agent
// may choose and the files it does not load. Pure: no `vscode` import, so Node's test
// runner can check it.
import type { ContextAgent, ContextFile, ContextResult, ContextSkipped } from "./protocol";

/** The agents the view can show, in the order the picker lists them. */
export const CONTEXT_AGENTS: readonly { id: ContextAgent; name: string; files: string }[] = [
  { id: "claude", name: "Claude Code", files: "CLAUDE.md and its imports, rules, auto memory's MEMORY.md" },
  { id: "codex", name: "Codex", files: "AGENTS.md from the git top down, up to 32 KiB" },
  { id: "cursor", name: "Cursor", files: ".cursor/rules/*.mdc that apply, .cursorrules" },
  { id: "copilot", name: "GitHub Copilot", files: ".github/copilot-instructions.md, matching *.instructions.md" },
  { id: "serena", name: "Serena", files: "the memories' names" },
  { id: "aicoder", name: "AI Coder", files: ".aicoder/memory/autoload.md" },
];
export const DEFAULT_CONTEXT_AGENT: ContextAgent = "claude";

export function isContextAgent(value: unknown): value is ContextAgent {
  return CONTEXT_AGENTS.some((agent) => agent.id === value);
}

export function agentName(id: ContextAgent): string {
  return CONTEXT_AGENTS.find((agent) => agent.id === id)?.name ?? id;
}

/** A row of the view; `open` is the file a click opens (`line`: 0-based, where to put the cursor). */
export interface ContextRow {
  kind: "total" | "file" | "optional" | "skipped" | "group";
  label: string;
  description: string;
  tooltip: string;
  /** A codicon id. */
  icon: string;
  warning: boolean;
  open?: { path: string; line?: number; column?: number };
  children?: ContextRow[];
}

export function tokens(count: number): string {
  return `${count.toLocaleString("en-US")} token${count === 1 ? "" : "s"}`;
}

/** "Total: 4,080 of 20,000 tokens (20%)". */
export function totalRow(result: ContextResult): ContextRow {
  const percent = result.budget > 0 ? Math.round((100 * result.total) / result.budget) : 0;
  const over = result.total - result.budget;
  const label = `Total: ${result.total.toLocaleString("en-US")} of ${tokens(result.budget)} (${percent}%)`;
  const where =
    result.file === null ? "at the start of a session, before any file is touched" : `working on ${result.file}`;
  const count = result.loaded.length;
  return {
    kind: "total",
    label,
    description: result.overBudget ? `${over.toLocaleString("en-US")} over the budget` : "",
    tooltip:
      `${result.agentName} loads ${count} file${count === 1 ? "" : "s"} ${where}: about ` +
      `${tokens(result.total)} (four characters a token) of a ${result.budget.toLocaleString("en-US")}-token budget.` +
      (result.notes.length > 0 ? `\n\n${result.notes.join("\n")}` : ""),
    icon: result.overBudget ? "warning" : "pass",
    warning: result.overBudget,
  };
}

/** A file the agent loads: its path, its tokens and where it is cut. */
export function fileRow(file: ContextFile, kind: "file" | "optional" = "file"): ContextRow {
  const description = [tokens(file.tokens)];
  if (file.cut !== null) {
    description.push(`cut: ${file.cut.text}`);
  }
  const tooltip = [file.path, file.why];
  if (file.importedBy !== null) {
    tooltip.push(`Imported by ${file.importedBy}.`);
  }
  if (file.cut !== null) {
    tooltip.push(`Cut: ${file.cut.text}.`);
  } else if (file.headroom !== null) {
    tooltip.push(`Headroom: ${file.headroom.text}.`);
  }
  if (file.names !== undefined) {
    tooltip.push(file.names.join(", "));
  }
  const row: ContextRow = {
    kind,
    label: file.shown,
    description: description.join(" · "),
    tooltip: tooltip.join("\n"),
    icon: file.names !== undefined ? "list-flat" : file.importedBy !== null ? "arrow-small-right" : "file",
    warning: file.cut !== null,
  };
  if (file.names === undefined) {
    // A cut file opens where the agent stops reading.
    row.open =
      file.cut !== null ? { path: file.path, line: file.cut.line - 1, column: file.cut.column } : { path: file.path };
  }
  return row;
}

function skippedRow(skipped: ContextSkipped): ContextRow {
  const by = skipped.importedBy !== null ? ` (imported by ${skipped.importedBy})` : "";
  const row: ContextRow = {
    kind: "skipped",
    label: skipped.shown,
    description: skipped.detail,
    tooltip: `${skipped.path}${by}\n${skipped.detail}`,
    icon: "circle-slash",
    warning: false,
  };
  if (skipped.reason !== "missing" && skipped.reason !== "folder") {
    row.open = { path: skipped.path };
  }
  return row;
}

/** Every row of the view: the total first, then the files in load order, then the groups. */
export function contextRows(result: ContextResult): ContextRow[] {
  const rows = [totalRow(result), ...result.loaded.map((file) => fileRow(file))];
  if (result.optional.length > 0) {
    rows.push({
      kind: "group",
      label: `May be chosen by the agent (${result.optional.length})`,
      description: "not counted",
      tooltip: "Rules with a description only: the agent loads one when it judges it relevant.",
      icon: "question",
      warning: false,
      children: result.optional.map((file) => fileRow(file, "optional")),
    });
  }
  if (result.skipped.length > 0) {
    rows.push({
      kind: "group",
      label: `Not loaded (${result.skipped.length})`,
      description: "",
      tooltip: "Files the agent would look at but does not load, and why.",
      icon: "circle-slash",
      warning: false,
      children: result.skipped.map(skippedRow),
    });
  }
  return rows;
}
