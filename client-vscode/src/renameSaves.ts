// After the editor renames or moves a memory, write the links the server's
// willRenameFiles edit rewrote to disk (as `memory.move` does): see renameLinks.ts.
import * as vscode from "vscode";
import { planRenameSaves, type TouchedFile } from "./renameLinks";

// An edit not followed by its rename within this long was for a rename that failed.
const PENDING_MS = 60_000;

interface Pending {
  at: number;
  touched: TouchedFile[];
}

const pending: Pending[] = [];

function openDocument(uri: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri);
}

/** Remember the files a willRenameFiles edit touches, and which had unsaved changes. */
export function trackRenameEdit(edit: vscode.WorkspaceEdit | null | undefined): void {
  const now = Date.now();
  while (pending.length > 0 && (pending[0]?.at ?? now) < now - PENDING_MS) {
    pending.shift();
  }
  if (edit === null || edit === undefined) {
    return;
  }
  const touched = edit.entries().map(([uri]) => ({
    uri: uri.toString(),
    dirtyBefore: openDocument(uri.toString())?.isDirty ?? false,
  }));
  if (touched.length > 0) {
    pending.push({ at: now, touched });
  }
}

async function saveAfter(event: vscode.FileRenameEvent): Promise<void> {
  const touched = pending.splice(0).flatMap((entry) => entry.touched);
  if (touched.length === 0) {
    return;
  }
  const renames = event.files.map((file) => ({ oldUri: file.oldUri.toString(), newUri: file.newUri.toString() }));
  const { save, keptDirty } = planRenameSaves(touched, renames);
  const failed: string[] = [];
  for (const uri of save) {
    const document = openDocument(uri);
    if (document?.isDirty && !(await document.save())) {
      failed.push(uri);
    }
  }
  const unsaved = [...keptDirty.filter((uri) => openDocument(uri)?.isDirty), ...failed];
  if (unsaved.length > 0) {
    const names = unsaved.map((uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri))).join(", ");
    void vscode.window.showWarningMessage(
      `The links to the renamed memory were rewritten in ${names}, which ${unsaved.length === 1 ? "has" : "have"} unsaved changes of yours: ` +
        `left unsaved, so on disk ${unsaved.length === 1 ? "it still links" : "they still link"} to the old name until saved.`,
    );
  }
}

/** Save the files each rename's edit touched once the rename is done. */
export function registerRenameSaves(): vscode.Disposable {
  return vscode.workspace.onDidRenameFiles((event) => void saveAfter(event));
}
