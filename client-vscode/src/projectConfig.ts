// The project file (memory-ls.toml) against the editor's settings: what the notices say,
// when they are due, and the text of "Show Configuration" (SPEC 3.6). Pure: no `vscode`
// import, so Node's test runner can check it.
import * as path from "node:path";
import type { ConfigurationResult } from "./protocol";
import type { ServerSettings } from "./settings";

/** The file name a notice names: the project file's, else the one a write creates. */
export function projectFileName(result: Pick<ConfigurationResult, "projectFile">): string {
  return result.projectFile !== null ? path.basename(result.projectFile) : "memory-ls.toml";
}

/** The editor setting a server key belongs to: `globalEnabled` (the file's `global`) is
 * what `memoryLs.globalFolder` sets along with the folder. */
export function settingName(key: string): string {
  return key === "globalEnabled" ? "globalFolder" : key;
}

/** The editor settings the server says are set, each once, by their setting names. */
export function editorSettings(result: Pick<ConfigurationResult, "editorKeys">): string[] {
  return [...new Set(result.editorKeys.map(settingName))];
}

/** The editor settings that override the project file, each once (a key can come from
 * the initialization options and the workspace configuration both), in the server's order. */
export function overrideKeys(result: Pick<ConfigurationResult, "overrides">): string[] {
  return [...new Set(result.overrides.map((override) => settingName(override.key)))];
}

/** "memory-ls: your settings override memory-ls.toml for additionalFolders, globalFolder." */
export function overrideMessage(result: ConfigurationResult, folder?: string): string {
  const where = folder !== undefined ? ` (${folder})` : "";
  return `memory-ls${where}: your settings override ${projectFileName(result)} for ${overrideKeys(result).join(", ")}. The terminal, agents and teammates use the file's values.`;
}

/** The notice that offers a project file to a workspace whose store is in the editor's settings only. */
export function offerMessage(keys: readonly string[], folder?: string): string {
  const where = folder !== undefined ? ` (${folder})` : "";
  return `memory-ls${where}: the store's settings (${keys.join(", ")}) are in the editor's settings only. Write them to memory-ls.toml so that the terminal, agents and teammates see the same store?`;
}

/**
 * What a notice is about: the same overrides (keys and values) of the same file are
 * shown once per session, and again only when they change.
 */
export function overrideNoticeKey(result: ConfigurationResult): string {
  const overrides = result.overrides
    .map((override) => `${override.key}=${JSON.stringify(override.value)}`)
    .sort()
    .join("\n");
  return `${result.projectFile ?? ""}\n${overrides}`;
}

export type Notice =
  | { kind: "none" }
  | { kind: "overrides"; message: string; key: string }
  | { kind: "offer"; message: string };

export interface NoticeState {
  /** The override notice last shown this session (overrideNoticeKey), if any. */
  shownOverrides: string | undefined;
  /** Whether the offer to write a project file was made this session. */
  offered: boolean;
  /** "Don't Show Again" of each notice (kept in the workspace's state). */
  overridesDismissed: boolean;
  offerDismissed: boolean;
}

/**
 * Which notice, if any, to show now. `workspaceKeys`: the server's settings set in the
 * workspace (not only in the user's settings), which a project file should hold instead.
 */
export function dueNotice(
  result: ConfigurationResult,
  workspaceKeys: readonly string[],
  state: NoticeState,
  folder?: string,
): Notice {
  if (result.projectFile !== null) {
    if (result.overrides.length === 0 || state.overridesDismissed) {
      return { kind: "none" };
    }
    const key = overrideNoticeKey(result);
    if (key === state.shownOverrides) {
      return { kind: "none" };
    }
    return { kind: "overrides", message: overrideMessage(result, folder), key };
  }
  const keys = workspaceKeys.filter((key) => editorSettings(result).includes(key));
  if (keys.length === 0 || state.offered || state.offerDismissed) {
    return { kind: "none" };
  }
  return { kind: "offer", message: offerMessage(keys, folder) };
}

/** A path as short as it reads well: relative to the store's root when inside it. */
function shortPath(file: string, root: string): string {
  if (!path.isAbsolute(file)) {
    return file;
  }
  const relative = path.relative(root, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
}

/** A setting's value as one line. */
export function displayValue(value: unknown, root: string): string {
  if (value === null || value === undefined) {
    return "(none)";
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return "(none)";
    }
    return value
      .map((entry: unknown) => {
        if (typeof entry === "object" && entry !== null && typeof (entry as { path?: unknown }).path === "string") {
          const folder = entry as { path: string; readOnly?: unknown };
          return shortPath(folder.path, root) + (folder.readOnly === true ? " (read-only)" : "");
        }
        return typeof entry === "string" ? shortPath(entry, root) : JSON.stringify(entry);
      })
      .join(", ");
  }
  if (typeof value === "string") {
    return value.startsWith("/") || /^[A-Za-z]:[\\/]/.test(value) ? shortPath(value, root) : value;
  }
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** Where a value came from, in the user's words. */
export function displaySource(source: string, result: Pick<ConfigurationResult, "projectFile" | "root">): string {
  if (result.projectFile !== null && source.startsWith(result.projectFile)) {
    return shortPath(result.projectFile, result.root) + source.slice(result.projectFile.length);
  }
  if (source === "initializationOptions") {
    return "editor settings (as the server started)";
  }
  if (source.startsWith("workspace configuration")) {
    return "editor settings";
  }
  return source;
}

/** The text of "Memory: Show Configuration" for one workspace folder. */
export function describeConfiguration(result: ConfigurationResult, folder: string): string {
  const lines = [`memory-ls configuration of ${folder}`, ""];
  lines.push(
    `Project file:  ${result.projectFile ?? "none (Memory: Write Settings to memory-ls.toml writes one)"}`,
    `Store root:    ${result.root}`,
  );
  if (result.problem !== null) {
    lines.push("", `Problem: ${result.problem}`, "The last good configuration stays in effect until the file is fixed.");
  }
  // Left unset, these follow the layout (SPEC 2.2), which follows the folders present.
  const unsetMeans: Record<string, string> = {
    layout: "(automatic)",
    "primary-folder": "(the layout's)",
    "global-folder": "(the layout's)",
  };
  const rows = Object.entries(result.settings).map(([key, setting]) => [
    key,
    setting.value === null && unsetMeans[key] !== undefined ? unsetMeans[key] : displayValue(setting.value, result.root),
    displaySource(setting.source, result),
  ]);
  const width = (column: number): number => Math.max(...rows.map((row) => (row[column] ?? "").length), 7);
  const keyWidth = width(0);
  const valueWidth = Math.min(width(1), 60);
  lines.push("", `${"Setting".padEnd(keyWidth)}  ${"Value".padEnd(valueWidth)}  Source`);
  for (const [key, value, source] of rows) {
    lines.push(`${(key ?? "").padEnd(keyWidth)}  ${(value ?? "").padEnd(valueWidth)}  ${source}`);
  }
  const overridden = overrideKeys(result);
  if (overridden.length > 0) {
    lines.push("", `Editor settings that override ${projectFileName(result)}:`);
    for (const key of overridden) {
      const override = result.overrides.filter((item) => settingName(item.key) === key).at(-1);
      lines.push(`  memoryLs.${key} = ${displayValue(override?.value, result.root)}`);
    }
    lines.push("Memory: Write Settings to memory-ls.toml puts the settings in effect into the file.");
  } else if (result.editorKeys.length > 0) {
    lines.push("", `Editor settings in effect: ${editorSettings(result).map((key) => `memoryLs.${key}`).join(", ")}`);
  }
  lines.push("", "Precedence, key by key: command-line flags, editor settings, the project file, defaults.");
  lines.push("`memory-ls config` prints the configuration the terminal and agents use.");
  return lines.join("\n") + "\n";
}

/**
 * The store's folders as the server resolved them (for watching them): the settings in
 * `ServerSettings` shape, to be resolved against `result.root`.
 */
export function resolvedStoreSettings(result: Pick<ConfigurationResult, "settings">): ServerSettings {
  const value = (key: string): unknown => result.settings[key]?.value;
  const settings: ServerSettings = {};
  const layout = value("layout");
  if (layout === "serena" || layout === "aicoder") {
    settings.layout = layout;
  }
  const primary = value("primary-folder");
  if (typeof primary === "string") {
    settings.primaryFolder = primary;
  }
  const additional = value("additional-folders");
  if (Array.isArray(additional)) {
    settings.additionalFolders = additional;
  }
  const global = value("global-folder");
  if (typeof global === "string") {
    settings.globalFolder = global;
  }
  return settings;
}
