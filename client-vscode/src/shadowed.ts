// Shadowed memories for the Memories view: `memory.list` lists one memory per name (the
// one lookup finds) with the paths of the files of that name it hides (`shadows`); the
// view lists those too, faded, so every memory file can be found and opened.
import type { MemoryInfo } from "./protocol";

/** A memory file hidden by another of the same name earlier in lookup order. */
export interface ShadowedMemory extends MemoryInfo {
  /** The path of the memory that hides this one. */
  shadowedBy: string;
}

export function isShadowed(memory: MemoryInfo): memory is ShadowedMemory {
  return typeof (memory as Partial<ShadowedMemory>).shadowedBy === "string";
}

function separator(path: string): string {
  return path.includes("\\") && !path.includes("/") ? "\\" : "/";
}

/** The configured folder holding `path`: the deepest of `folders` above it, else its directory. */
export function folderOf(path: string, folders: Iterable<string>): string {
  let best: string | undefined;
  for (const folder of folders) {
    const trimmed = folder.replace(/[\\/]+$/, "");
    if (path.startsWith(trimmed + separator(path)) && (best === undefined || trimmed.length > best.length)) {
      best = trimmed;
    }
  }
  if (best !== undefined) {
    return best;
  }
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return cut > 0 ? path.slice(0, cut) : path;
}

/**
 * The listed memories and, after them, each file they shadow (same name and scope, its
 * folder found among `folders` and the listed memories' folders). Tags and dates are
 * not known for a shadowed file: lookup never reads it.
 */
export function withShadowed(memories: readonly MemoryInfo[], folders: Iterable<string> = []): MemoryInfo[] {
  const known = new Set<string>(folders);
  const listed = new Set<string>();
  for (const memory of memories) {
    known.add(memory.folder);
    listed.add(memory.path);
  }
  const hidden: ShadowedMemory[] = [];
  for (const memory of memories) {
    for (const path of memory.shadows) {
      if (listed.has(path)) {
        continue;
      }
      listed.add(path);
      hidden.push({
        name: memory.name,
        path,
        scope: memory.scope,
        folder: folderOf(path, known),
        tags: [],
        updatedAt: null,
        // Not known either; the view offers no change to it (a change by name would
        // change the memory that hides it).
        readOnly: false,
        validName: memory.validName,
        shadows: [],
        shadowedBy: memory.path,
      });
    }
  }
  return hidden.length === 0 ? [...memories] : [...memories, ...hidden];
}
