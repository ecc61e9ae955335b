// Which files to save after the editor renamed or moved a memory (the Explorer, F2,
// a quick fix): the server's willRenameFiles edit rewrites the links to it in other
// files, which VS Code applies in their editors and leaves unsaved. They are saved, as
// `memory.move` writes them, unless a file had unsaved changes of the user's before the
// edit: that one stays unsaved (saving would write the user's unfinished work), and the
// user is told. Pure logic: no vscode here (unit-tested).

export interface TouchedFile {
  /** The file's URI (as a string) when the edit was made. */
  uri: string;
  /** Whether it had unsaved changes before the edit. */
  dirtyBefore: boolean;
}

export interface Rename {
  oldUri: string;
  newUri: string;
}

export interface RenameSaves {
  /** Where the files to save are now (their URIs after the renames). */
  save: string[];
  /** Files that had unsaved changes before: left unsaved. */
  keptDirty: string[];
}

/** Where a file is after the renames (a renamed file, or one in a renamed folder). */
export function renamedUri(uri: string, renames: readonly Rename[]): string {
  for (const { oldUri, newUri } of renames) {
    if (uri === oldUri) {
      return newUri;
    }
    const folder = oldUri.endsWith("/") ? oldUri : `${oldUri}/`;
    if (uri.startsWith(folder)) {
      return (newUri.endsWith("/") ? newUri : `${newUri}/`) + uri.slice(folder.length);
    }
  }
  return uri;
}

/** What to save once the renames are done, and what to leave unsaved. */
export function planRenameSaves(touched: readonly TouchedFile[], renames: readonly Rename[]): RenameSaves {
  const save: string[] = [];
  const keptDirty: string[] = [];
  const seen = new Set<string>();
  for (const file of touched) {
    const now = renamedUri(file.uri, renames);
    if (seen.has(now)) {
      continue;
    }
    seen.add(now);
    (file.dirtyBefore ? keptDirty : save).push(now);
  }
  return { save, keptDirty };
}
