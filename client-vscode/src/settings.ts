// VS Code settings (`memoryLs.*`) -> the settings the language server understands
// (SPEC 3.6). Pure: no `vscode` import, so Node's test runner can check it.
import * as path from "node:path";

/** The keys of the `memoryLs` section that belong to the server; the rest are the client's. */
export const SERVER_KEYS = [
  "layout",
  "primaryFolder",
  "additionalFolders",
  "globalFolder",
  "maxMemoryBytes",
  "diagnostics",
  "diagnosticsScope",
  "secrets",
] as const;

export type ServerKey = (typeof SERVER_KEYS)[number];
export type ServerSettings = Partial<Record<ServerKey, unknown>>;

export interface FolderEntry {
  path: string;
  readOnly: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a value means "not set": the server then keeps the lower source's value. */
function unset(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === "string" && value.trim() === "");
}

/**
 * The server's settings out of a `memoryLs` section (from `getConfiguration` or a raw
 * `workspace/configuration` answer).
 *
 * Only the server's keys are passed on (the server warns about unknown ones, and
 * `server.pythonPath` / `trace.server` are the client's). Values that mean "not set"
 * are dropped: null, empty strings, empty entries of `additionalFolders` (the Settings
 * editor adds those) and null severities. Anything else is passed unchanged, so that a
 * wrong type reaches the server, which reports it and keeps its previous settings.
 */
export function toServerSettings(section: unknown): ServerSettings {
  const result: ServerSettings = {};
  if (!isRecord(section)) {
    return result;
  }
  for (const key of SERVER_KEYS) {
    const value = section[key];
    if (unset(value)) {
      continue;
    }
    if (key === "additionalFolders" && Array.isArray(value)) {
      result[key] = value.filter(
        (entry: unknown) => !unset(entry) && !(isRecord(entry) && unset(entry["path"])),
      );
    } else if (key === "diagnostics" && isRecord(value)) {
      const severities = Object.entries(value).filter(([, severity]) => !unset(severity));
      // No severity set is no setting: an empty object would hide the project file's.
      if (severities.length > 0) {
        result[key] = Object.fromEntries(severities);
      }
    } else if (typeof value === "string") {
      result[key] = value.trim();
    } else {
      result[key] = value;
    }
  }
  return result;
}

/** What VS Code's `WorkspaceConfiguration.inspect` says of one setting (the levels we read). */
export interface Inspection {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The `memoryLs` section as the user set it: each server key at its most specific level
 * (folder over workspace over user), never the manifest's default. A setting left unset
 * must not reach the server, where it would override the project file (SPEC 3.6).
 * Object settings (`diagnostics`) merge across levels, as VS Code's `get` merges them.
 */
export function explicitSection(inspect: (key: ServerKey) => Inspection | undefined): Record<string, unknown> {
  const section: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const inspection = inspect(key);
    if (inspection === undefined) {
      continue;
    }
    const levels = [inspection.globalValue, inspection.workspaceValue, inspection.workspaceFolderValue].filter(
      (value) => value !== undefined,
    );
    if (levels.length === 0) {
      continue;
    }
    section[key] = levels.every(isRecord)
      ? Object.assign({}, ...(levels as Record<string, unknown>[]))
      : levels[levels.length - 1];
  }
  return section;
}

/**
 * The server keys set in the workspace (`.vscode/settings.json`, the workspace file or
 * the folder's settings), not only in the user's own settings: the repository's store,
 * which a project file should hold for every surface and every teammate.
 */
export function workspaceKeys(inspect: (key: ServerKey) => Inspection | undefined): ServerKey[] {
  return SERVER_KEYS.filter((key) => {
    const inspection = inspect(key);
    const values = [inspection?.workspaceValue, inspection?.workspaceFolderValue];
    return values.some((value) => Object.keys(toServerSettings({ [key]: value })).length > 0);
  });
}

/** `additionalFolders` entries in one shape (string form `path:ro`, or `{path, readOnly}`). */
export function folderEntries(value: unknown): FolderEntry[] {
  if (typeof value === "string") {
    value = value.split(",");
  }
  if (!Array.isArray(value)) {
    return [];
  }
  const entries: FolderEntry[] = [];
  for (const entry of value as unknown[]) {
    if (typeof entry === "string") {
      let text = entry.trim();
      const readOnly = text.endsWith(":ro");
      if (readOnly) {
        text = text.slice(0, -3).trimEnd();
      }
      if (text) {
        entries.push({ path: text, readOnly });
      }
    } else if (isRecord(entry) && typeof entry["path"] === "string" && entry["path"].trim()) {
      entries.push({ path: entry["path"].trim(), readOnly: entry["readOnly"] === true });
    }
  }
  return entries;
}

/**
 * The command line's store flags for these settings (`memory-ls mcp` in the editor's
 * agents): the same folders and limits as the language server. The diagnostics'
 * severities and scope are the editor's and have no flag.
 */
export function cliFlags(settings: ServerSettings): string[] {
  const flags: string[] = [];
  const text = (key: ServerKey, flag: string): void => {
    const value = settings[key];
    if (typeof value === "string" && value.trim()) {
      flags.push(flag, value.trim());
    }
  };
  text("layout", "--layout");
  text("primaryFolder", "--primary-folder");
  // The flag is comma-separated: a path holding a comma cannot be given (left out).
  const folders = folderEntries(settings.additionalFolders).filter((entry) => !entry.path.includes(","));
  if (folders.length > 0) {
    flags.push("--additional-folders", folders.map((entry) => (entry.readOnly ? `${entry.path}:ro` : entry.path)).join(","));
  }
  text("globalFolder", "--global-folder");
  if (typeof settings.maxMemoryBytes === "number" && Number.isInteger(settings.maxMemoryBytes)) {
    flags.push("--max-memory-bytes", String(settings.maxMemoryBytes));
  }
  text("secrets", "--secrets");
  return flags;
}

export interface Environment {
  /** Workspace root (absolute). */
  root: string;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Whether a directory exists (for the automatic layout). */
  isDirectory: (absolutePath: string) => boolean;
}

/** A folder path as the server resolves it: `~` expanded, relative to the workspace root. */
export function resolveFolder(folder: string, environment: Pick<Environment, "root" | "home">): string {
  let text = folder.trim();
  if (text === "~") {
    text = environment.home;
  } else if (text.startsWith("~/")) {
    text = path.join(environment.home, text.slice(2));
  }
  return path.resolve(environment.root, text);
}

export type Layout = "serena" | "aicoder";

/** The layout in effect: the setting, else aicoder when only `.aicoder/memory` exists (SPEC 2.2). */
export function effectiveLayout(settings: ServerSettings, environment: Environment): Layout {
  if (settings.layout === "serena" || settings.layout === "aicoder") {
    return settings.layout;
  }
  const aicoder = environment.isDirectory(path.join(environment.root, ".aicoder", "memory"));
  const serena = environment.isDirectory(path.join(environment.root, ".serena", "memories"));
  return aicoder && !serena ? "aicoder" : "serena";
}

export interface MemoryFolder {
  path: string;
  kind: "primary" | "additional" | "global";
}

/**
 * The memory folders these settings configure (SPEC 2.2), for watching them: primary,
 * additional in order, then global. Whether they exist is not checked.
 */
export function memoryFolders(settings: ServerSettings, environment: Environment): MemoryFolder[] {
  const layout = effectiveLayout(settings, environment);
  const primary =
    typeof settings.primaryFolder === "string"
      ? settings.primaryFolder
      : layout === "aicoder"
        ? ".aicoder/memory"
        : ".serena/memories";
  const folders: MemoryFolder[] = [{ path: resolveFolder(primary, environment), kind: "primary" }];
  for (const entry of folderEntries(settings.additionalFolders)) {
    folders.push({ path: resolveFolder(entry.path, environment), kind: "additional" });
  }
  let global: string;
  if (typeof settings.globalFolder === "string") {
    global = resolveFolder(settings.globalFolder, environment);
  } else if (layout === "aicoder") {
    global = path.join(environment.home, ".config", "aicoder", "memory");
  } else {
    const serenaHome = environment.env["SERENA_HOME"];
    global = serenaHome
      ? path.join(resolveFolder(serenaHome, environment), "memories", "global")
      : path.join(environment.home, ".serena", "memories", "global");
  }
  folders.push({ path: global, kind: "global" });
  return folders;
}

