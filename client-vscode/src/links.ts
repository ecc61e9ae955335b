// Links between memories outside the editor text: the Memory Links view and the
// Markdown preview's memory links.
import type MarkdownIt from "markdown-it";
import type * as vscode from "vscode";
import { MemoryLinksView } from "./linksView";
import { MemoryPreviewLinks } from "./preview";
import type { MemoryServers } from "./servers";

/** Register the view and the preview plugin; the result is the extension's API for the preview. */
export function registerLinks(
  context: vscode.ExtensionContext,
  servers: MemoryServers,
): { extendMarkdownIt(md: MarkdownIt): MarkdownIt } {
  const preview = new MemoryPreviewLinks(servers);
  context.subscriptions.push(new MemoryLinksView(servers), preview);
  return { extendMarkdownIt: (md) => preview.extend(md) };
}
