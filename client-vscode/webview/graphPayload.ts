// What the server's `memory.graph` answers (docs/guides/language-server.md): shared by the
// extension, which asks for it, and the webview, which draws it (a type only: no code).
/** What `memory.graph` answers (see docs/guides/language-server.md). */
export interface GraphPayload {
  format: number;
  fields: string[];
  flags: Record<string, number>;
  folders: { path: string; label: string; scope: string; kind: string; readOnly: boolean }[];
  tags: string[];
  /** [name, folder (-1: missing), linksIn, linksOut, flags, problems, tag positions] */
  nodes: [string, number, number, number, number, number, number[]][];
  /** Flat pairs of node positions: source, target, source, target… */
  edges: number[];
  center: number | null;
  total: { nodes: number; edges: number };
  truncated: boolean;
  pending: number;
  generation: number;
}
