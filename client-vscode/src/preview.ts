// Memory links in VS Code's Markdown preview: the markdown-it plugin (previewLinks.ts) with
// names resolved from the server's list of memories (the catalog: one memory per name, in
// lookup order), kept current; the previews are redrawn when the names change.
import * as path from "node:path";
import type MarkdownIt from "markdown-it";
import * as vscode from "vscode";
import { memoryLinksPlugin, relativeHref, type Resolution } from "./previewLinks";
import type { MemoryInfo } from "./protocol";
import type { MemoryServers } from "./servers";

const MARKDOWN_EXTENSION = "vscode.markdown-language-features";

/** What the renderer gets from the preview: the document rendered (VS Code's `env`). */
interface PreviewEnv {
  currentDocument?: vscode.Uri;
}

function currentDocument(env: unknown): vscode.Uri | undefined {
  const uri = (env as PreviewEnv | undefined)?.currentDocument;
  return uri instanceof vscode.Uri ? uri : undefined;
}

export class MemoryPreviewLinks implements vscode.Disposable {
  // Name -> path per list of memories (a new list is a new array: the map follows it).
  private readonly maps = new WeakMap<readonly MemoryInfo[], Map<string, string>>();
  private catalogSubscriptions: vscode.Disposable[] = [];
  private readonly subscription: vscode.Disposable;
  private shownNames = "";
  private pendingRefresh: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly servers: MemoryServers) {
    this.subscription = servers.onDidChange(() => this.follow());
    this.follow();
  }

  /** The markdown-it plugin for `extendMarkdownIt`. */
  extend(md: MarkdownIt): MarkdownIt {
    memoryLinksPlugin(md, {
      lookup: (target, env) => this.lookup(target, currentDocument(env)),
      href: (target, env) => {
        const from = currentDocument(env);
        if (from === undefined || from.scheme !== "file") {
          return vscode.Uri.file(target.path).toString();
        }
        return relativeHref(from.fsPath, target.path, path.sep);
      },
    });
    return md;
  }

  private lookup(target: string, document: vscode.Uri | undefined): Resolution {
    if (this.servers.all.length === 0) {
      return "pending";
    }
    const served = document !== undefined && document.scheme === "file" ? this.servers.forUri(document) : this.servers.primary;
    if (!served.catalog.loaded) {
      return "pending";
    }
    const found = this.names(served.catalog.memories).get(target);
    return found === undefined ? "broken" : { name: target, path: found };
  }

  /** The valid names of a list (a file whose name breaks the rules is no link's target). */
  private names(memories: readonly MemoryInfo[]): Map<string, string> {
    let map = this.maps.get(memories);
    if (map === undefined) {
      map = new Map(memories.filter((memory) => memory.validName).map((memory) => [memory.name, memory.path]));
      this.maps.set(memories, map);
    }
    return map;
  }

  private follow(): void {
    for (const subscription of this.catalogSubscriptions) {
      subscription.dispose();
    }
    this.catalogSubscriptions = this.servers.all.map((served) => served.catalog.onDidChange(() => this.namesChanged()));
    this.namesChanged();
  }

  /** Redraw the previews when a name or its file changed (not on every reload). */
  private namesChanged(): void {
    const shown = this.servers.all
      .map((served) => (served.catalog.loaded ? [...this.names(served.catalog.memories)].join("\n") : "…"))
      .join("\n\n");
    if (shown === this.shownNames) {
      return;
    }
    this.shownNames = shown;
    // Only previews already drawn need it (the command would start the Markdown extension).
    if (vscode.extensions.getExtension(MARKDOWN_EXTENSION)?.isActive !== true) {
      return;
    }
    clearTimeout(this.pendingRefresh);
    this.pendingRefresh = setTimeout(() => void vscode.commands.executeCommand("markdown.preview.refresh"), 100);
  }

  dispose(): void {
    clearTimeout(this.pendingRefresh);
    this.subscription.dispose();
    for (const subscription of this.catalogSubscriptions) {
      subscription.dispose();
    }
  }
}
