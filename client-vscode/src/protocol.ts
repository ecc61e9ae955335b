// The server's commands (SPEC 3.3): their names, arguments and results.
// Pure types, shared by the commands, the tree view and the status bar.

export type Scope = "project" | "global";
export type RoutedBy = "existing" | "prefix" | "topic" | "global" | "default";

export interface SaveArgs {
  name: string;
  content: string;
  tags?: string[];
  scope?: Scope;
}
export interface SaveResult {
  name: string;
  path: string;
  scope: Scope;
  folder: string;
  created: boolean;
  routedBy: RoutedBy;
}

export interface NameArgs {
  name: string;
  scope?: Scope;
}

export interface ReadResult {
  name: string;
  path: string;
  scope: Scope;
  folder: string;
  content: string;
  tags: string[];
  createdAt: string | null;
  updatedAt: string | null;
  readOnly: boolean;
}

export interface DeleteResult {
  name: string;
  path: string;
}

export interface MoveArgs extends NameArgs {
  newName: string;
}
export interface MoveResult {
  name: string;
  newName: string;
  path: string;
  updatedReferences: number;
}

export interface ListArgs {
  scope?: Scope | "all";
  tags?: string[];
  prefix?: string;
}
export interface MemoryInfo {
  name: string;
  path: string;
  scope: Scope;
  folder: string;
  tags: string[];
  updatedAt: string | null;
  readOnly: boolean;
  /** False for a file name memory-ls would not create (Serena may have): it can be renamed. */
  validName: boolean;
  shadows: string[];
}
export interface ListResult {
  memories: MemoryInfo[];
}

export interface SearchArgs {
  query: string;
  tags?: string[];
  scope?: Scope;
  limit?: number;
}
export interface SearchHit {
  name: string;
  path: string;
  line: number;
  text: string;
  score: number;
}
export interface SearchResult {
  results: SearchHit[];
  /** With no exact match: the query with each unknown word replaced by its closest known
   * word, whose results these are (absent when the results match the query as typed). */
  closest?: string;
}

export interface RouteResult {
  name: string;
  path: string;
  folder: string;
  routedBy: RoutedBy;
  exists: boolean;
  /** The target folder is read-only (`:ro`, or Serena's read_only_memory_patterns): a save is refused. */
  readOnly: boolean;
  /** The name's ALL-CAPS prefix when it matches no additional folder (it stays in the primary folder). */
  unknownPrefix: string | null;
}

export interface AboutArgs {
  /** A workspace-relative path, a file name or a symbol. */
  target: string;
  limit?: number;
}
export type AboutMatch = "path" | "inside" | "name" | "symbol";
export interface AboutLine {
  line: number;
  text: string;
  match: AboutMatch;
}
export interface AboutMemory {
  name: string;
  path: string;
  scope: Scope;
  title: string;
  match: AboutMatch;
  lines: AboutLine[];
  moreLines: number;
}
export interface AboutResult {
  target: string;
  targetPath: string;
  memories: AboutMemory[];
  /** Memories that mention the target beyond the limit. */
  more: number;
}

export interface ChangesArgs {
  /** A git revision; left out: the merge base with the default branch. */
  rev?: string;
  /** Also the text `memory-ls changes` prints. */
  withText?: boolean;
}
export interface MemoryChange {
  status: "added" | "changed" | "renamed" | "deleted" | "conflict";
  name: string;
  path: string;
  oldName?: string;
  oldPath?: string;
  /** How git left it unmerged ("deleted by us, modified by them"); with status "conflict". */
  conflict?: string;
}
export interface ChangesResult {
  base: { rev: string; commit: string; how: string };
  root: string;
  changes: MemoryChange[];
  text?: string;
}

/** `memory.links`: a memory by its document's URI, or by name. */
export interface LinksArgs {
  uri?: string;
  name?: string;
  scope?: Scope;
}
export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}
/** A line that links: the linked name's range (client units) and the line's text. */
export interface LinkLine {
  line: number;
  range: LspRange;
  text: string;
}
/** A file that links to the memory (`name` null: an open note that is no memory), or an
 * agent's file that imports or indexes the document (`kind` "import" / "index"). */
export interface LinkSource {
  uri: string;
  path: string;
  name: string | null;
  scope: Scope | null;
  /** "reference" (older servers send none), "import" or "index". */
  kind?: "reference" | "import" | "index";
  links: LinkLine[];
}
/** A reference in the memory and the memory it resolves to (`broken`: none); in an agent's
 * file also an `@path` import or a MEMORY.md link and the file it names (`name`: its path
 * for people; `broken`: no such file). */
export interface LinkTarget extends LinkLine {
  target: string;
  label: string | null;
  form: "wiki" | "mem" | "import" | "index";
  broken: boolean;
  name: string | null;
  uri: string | null;
  path: string | null;
}
/** An agent's file (CLAUDE.md, MEMORY.md, a topic file, a file a CLAUDE.md imports...). */
export interface LinksAgentFile {
  layout: string;
  /** "instructions", "rule", "memory-index", "topic", "memory-bank", or "imported". */
  kind: string;
  scope: string | null;
  /** Its path relative to the root, `~/...` under the home. */
  shown: string;
}
export interface LinksResult {
  uri: string;
  path: string | null;
  /** The memory the document is (null: a Markdown file that is no memory). */
  name: string | null;
  scope: Scope | null;
  /** False when the names were still being listed (a link may be called broken too soon). */
  complete: boolean;
  /** What the document is as another agent's file (older servers send none). */
  agent?: LinksAgentFile | null;
  linkedFrom: LinkSource[];
  linksTo: LinkTarget[];
}

/** `memory.context`: what an agent loads working on a file (no uri: before any file). */
export type ContextAgent = "claude" | "codex" | "cursor" | "copilot" | "serena" | "aicoder";
export interface ContextArgs {
  uri?: string;
  agent?: ContextAgent;
  budget?: number;
}
/** Where an agent stops reading a file (`line` 1-based: the first not loaded whole). */
export interface ContextCut {
  by: "lines" | "bytes" | "budget";
  line: number;
  column: number;
  loadedLines: number;
  totalLines: number;
  loadedBytes: number;
  totalBytes: number;
  text: string;
}
/** How much of its own limit a file loaded whole uses. */
export interface ContextHeadroom {
  lines: number;
  maxLines: number | null;
  bytes: number;
  maxBytes: number;
  text: string;
}
/** A file the agent loads (or may choose to load), with its estimated tokens. */
export interface ContextFile {
  path: string;
  /** Relative to the root, `~/…`, or absolute. */
  shown: string;
  kind: string;
  why: string;
  tokens: number;
  loadedBytes: number;
  totalBytes: number;
  /** Import hops from the file that started the chain. */
  depth: number;
  importedBy: string | null;
  cut: ContextCut | null;
  headroom: ContextHeadroom | null;
  /** Serena: the memory names listed (`path` is then their folder). */
  names?: string[];
}
/** A file the agent would look at but does not load, and why. */
export interface ContextSkipped {
  path: string;
  shown: string;
  reason: string;
  detail: string;
  importedBy: string | null;
}
export interface ContextResult {
  agent: ContextAgent;
  agentName: string;
  root: string;
  /** Relative to the root; null: a session before any file is touched. */
  file: string | null;
  budget: number;
  total: number;
  overBudget: boolean;
  tokensPerCharacter: number;
  loaded: ContextFile[];
  optional: ContextFile[];
  skipped: ContextSkipped[];
  notes: string[];
}

/** A setting in effect: its value and where it came from ("default", the project file,
 * "initializationOptions", "workspace configuration (memoryLs)", the flags). */
export interface ResolvedSetting {
  value: unknown;
  source: string;
}
/** An editor setting that sets a key the project file sets too, to another value. */
export interface SettingOverride {
  /** camelCase, as the editor's setting is named (`additionalFolders`). */
  key: string;
  source: string;
  value: unknown;
}
/** `memory.configuration`: the configuration in effect and where each value came from. */
export interface ConfigurationResult {
  /** The project file in effect (memory-ls.toml, .memory-ls.toml, pyproject.toml), or null. */
  projectFile: string | null;
  /** The store's root (the project file's directory, else the workspace folder). */
  root: string;
  /** What is wrong with the project file on disk (the last good one stays in effect). */
  problem: string | null;
  /** By the project file's key names (`additional-folders`, `diagnostics.<code>`). */
  settings: Record<string, ResolvedSetting>;
  /** The camelCase keys the editor's settings set. */
  editorKeys: string[];
  overrides: SettingOverride[];
}
export interface WriteProjectFileArgs {
  /** Rewrite an existing project file (its comments are lost). */
  replace?: boolean;
}
export interface WriteProjectFileResult {
  path: string;
  replaced: boolean;
  content: string;
}

/** Each server command with its argument and result types. */
export interface Commands {
  "memory.save": [SaveArgs, SaveResult];
  "memory.read": [NameArgs, ReadResult];
  "memory.delete": [NameArgs, DeleteResult];
  "memory.move": [MoveArgs, MoveResult];
  "memory.list": [ListArgs, ListResult];
  "memory.search": [SearchArgs, SearchResult];
  "memory.route": [NameArgs, RouteResult];
  "memory.about": [AboutArgs, AboutResult];
  "memory.changes": [ChangesArgs, ChangesResult];
  "memory.links": [LinksArgs, LinksResult];
  "memory.context": [ContextArgs, ContextResult];
  "memory.configuration": [Record<string, never>, ConfigurationResult];
  "memory.writeProjectFile": [WriteProjectFileArgs, WriteProjectFileResult];
}
export type CommandName = keyof Commands;
