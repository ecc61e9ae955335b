// What the server's `memory.graph` answers (docs/guides/language-server.md): shared by the
// extension, which asks for it, and the webview, which draws it (a type only: no code).
export interface GraphFolder {
  path: string;
  label: string;
  scope: string;
  kind: string;
  readOnly: boolean;
  agent?: string;
  home?: string;
}
/** What `memory.graph` answers (see docs/guides/language-server.md). */
export interface GraphPayload {
  format: number;
  fields: string[];
  flags: Record<string, number>;
  /** The memory folders, then one per agent whose files are nodes (`kind` "agent": `label`
   * its layout, `agent` its name, `path` the root and `home` the home folder). */
  folders: GraphFolder[];
  tags: string[];
  /** [name, folder (-1: missing), linksIn, linksOut, flags, problems, tag positions]; an
   * agent's file (flag `agent`) is named by its path: relative to the root, `~/...` */
  nodes: [string, number, number, number, number, number, number[]][];
  /** Flat pairs of node positions: source, target, source, target… */
  edges: number[];
  center: number | null;
  total: { nodes: number; edges: number };
  truncated: boolean;
  pending: number;
  generation: number;
}
