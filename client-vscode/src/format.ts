// How memories, folders and routes are shown: labels, grouping for the tree view and
// the texts of messages. Pure: no `vscode` import, so Node's test runner can check it.
import * as path from "node:path";
import type { AboutMatch, AboutResult, MemoryInfo, RouteResult, RoutedBy, Scope } from "./protocol";

export interface Places {
  /** Workspace root, or undefined without a folder open. */
  root: string | undefined;
  home: string;
}

/** A path for people: relative to the workspace root inside it, `~/…` under home, else absolute. */
export function displayPath(absolute: string, places: Places): string {
  if (places.root !== undefined) {
    const relative = path.relative(places.root, absolute);
    if (relative === "") {
      return ".";
    }
    if (!relative.startsWith("..") && !path.isAbsolute(relative)) {
      return relative.split(path.sep).join("/");
    }
  }
  const fromHome = path.relative(places.home, absolute);
  if (fromHome !== "" && !fromHome.startsWith("..") && !path.isAbsolute(fromHome)) {
    return `~/${fromHome.split(path.sep).join("/")}`;
  }
  return absolute;
}

const ROUTE_REASONS: Record<RoutedBy, string> = {
  existing: "exists; saving overwrites it in place",
  prefix: "new; routed by its ALL-CAPS prefix",
  topic: "new; a topic path under the primary folder",
  global: "new; global scope",
  default: "new; the primary folder",
};

/**
 * "FEATURE_x → shared/feature/FEATURE_x.md (new; routed by its ALL-CAPS prefix)", with
 * what a save would be told: a read-only target, or a prefix that matches no folder.
 */
export function describeRoute(route: RouteResult, places: Places): string {
  const where = `${route.name} → ${displayPath(route.path, places)}`;
  if (route.readOnly) {
    return `${where} is read-only: a save there is refused. Choose another name or prefix.`;
  }
  const text = `${where} (${ROUTE_REASONS[route.routedBy] ?? route.routedBy})`;
  if (route.unknownPrefix && !route.exists) {
    return `${text}. Prefix ${route.unknownPrefix} matches no additional folder, so it stays in the primary folder.`;
  }
  return text;
}

export function scopeLabel(scope: Scope): string {
  return scope === "global" ? "Global" : "Project";
}

export interface FolderGroup {
  folder: string;
  label: string;
  memories: MemoryInfo[];
}
export interface ScopeGroup {
  scope: Scope;
  label: string;
  folders: FolderGroup[];
}

/**
 * Memories grouped for the tree view: scopes (project, then global; empty ones left
 * out), then folders sorted by their label, then memories sorted by name.
 */
export function groupMemories(memories: readonly MemoryInfo[], places: Places): ScopeGroup[] {
  const scopes: ScopeGroup[] = [];
  for (const scope of ["project", "global"] as const) {
    const byFolder = new Map<string, FolderGroup>();
    for (const memory of memories) {
      if (memory.scope !== scope) {
        continue;
      }
      let group = byFolder.get(memory.folder);
      if (group === undefined) {
        group = { folder: memory.folder, label: displayPath(memory.folder, places), memories: [] };
        byFolder.set(memory.folder, group);
      }
      group.memories.push(memory);
    }
    if (byFolder.size === 0) {
      continue;
    }
    const folders = [...byFolder.values()].sort((a, b) => a.label.localeCompare(b.label));
    for (const folder of folders) {
      folder.memories.sort((a, b) => a.name.localeCompare(b.name));
    }
    scopes.push({ scope, label: scopeLabel(scope), folders });
  }
  return scopes;
}

export interface PickText {
  label: string;
  description: string;
  detail: string;
}

/** Quick pick texts of a memory: the name; folder and scope; tags (all searchable). */
export function memoryPickText(memory: MemoryInfo, places: Places): PickText {
  const flags = [scopeLabel(memory.scope).toLowerCase()];
  if (memory.readOnly) {
    flags.push("read-only");
  }
  return {
    label: memory.name,
    description: `${displayPath(memory.folder, places)} · ${flags.join(", ")}`,
    detail: memory.tags.length > 0 ? memory.tags.map((tag) => `#${tag}`).join(" ") : "",
  };
}

/** Tags typed as "a, b c" -> ["a", "b", "c"] (no duplicates, no empties). */
export function parseTags(text: string): string[] {
  const tags: string[] = [];
  for (const tag of text.split(/[\s,]+/)) {
    const clean = tag.replace(/^#/, "");
    if (clean && !tags.includes(clean)) {
      tags.push(clean);
    }
  }
  return tags;
}

/** "#payments retry" -> words "retry", tags ["payments"] (a lone # is a word). */
export function splitTags(text: string): { words: string; tags: string[] } {
  const tags: string[] = [];
  const words: string[] = [];
  for (const token of text.split(/\s+/)) {
    if (token.length > 1 && token.startsWith("#")) {
      tags.push(token.slice(1));
    } else if (token) {
      words.push(token);
    }
  }
  return { words: words.join(" "), tags };
}

/** "1 memory", "12 memories". */
export function countLabel(count: number): string {
  return `${count} ${count === 1 ? "memory" : "memories"}`;
}

/** A memory name suggested from selected text: its first words, as a valid name. */
export function suggestName(text: string): string {
  const firstLine =
    text
      .split(/\r?\n/)
      .map((line) => line.replace(/^#+\s*/, "").trim())
      .find((line) => line !== "") ?? "";
  return firstLine
    .replace(/[^A-Za-z0-9_\- ]+/g, " ")
    .trim()
    .split(/\s+/)
    .slice(0, 6)
    .join("_")
    .slice(0, 60)
    .replace(/^[-_.]+|[-_.]+$/g, "");
}

/** A name for a file whose name breaks the rules: each forbidden character becomes `_`. */
export function suggestValidName(name: string): string {
  const replaced = name
    .trim()
    // Invalid in Windows file names, control characters and invisible format characters.
    .replace(/[\\:*?"<>|]|\p{Cc}|\p{Cf}/gu, "_")
    .replace(/^[.]+$/, "_");
  return replaced || "memory";
}

/** A file's path relative to the workspace root, with `/`; undefined outside the root. */
export function workspaceRelative(root: string, file: string): string | undefined {
  const relative = path.relative(root, file);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) {
    return undefined;
  }
  return relative.split(path.sep).join("/");
}

const MATCH_LABELS: Record<AboutMatch, string> = {
  path: "names this path",
  inside: "names a path inside it",
  name: "same file name",
  symbol: "in code",
};

export interface AboutPickText extends PickText {
  path: string;
  /** The line to open the memory at (1-based): its best mention. */
  line: number;
}

/** Quick pick texts of the memories that mention a file: the name and title; how it is
 *  mentioned; the best mentioning line (opened when chosen). */
export function aboutPickItems(result: AboutResult): AboutPickText[] {
  return result.memories.map((memory) => {
    const best = memory.lines.find((line) => line.match === memory.match) ?? memory.lines[0];
    const others = memory.lines.length - 1 + memory.moreLines;
    const more = others > 0 ? ` (+${others} more ${others === 1 ? "line" : "lines"})` : "";
    return {
      label: memory.name,
      description: [memory.title, MATCH_LABELS[memory.match]].filter((part) => part).join(" · "),
      detail: best === undefined ? "" : `${best.line}: ${best.text}${more}`,
      path: memory.path,
      line: best?.line ?? 1,
    };
  });
}
