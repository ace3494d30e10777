/**
 * The scratch copy of a workspace a replay's tools run in: a fresh temporary folder with
 * the workspace's files (symbolic links copied as links), without bub's own home when that
 * lies inside the workspace. Removed when the replay ends, unless it is kept.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve, isAbsolute } from "node:path";

/** A scratch copy; `remove` deletes it (a second call does nothing). */
export interface ScratchCopy {
  readonly path: string;
  remove(): Promise<void>;
}

function inside(parent: string, path: string): boolean {
  const rel = relative(parent, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Copies `workspace` into a new temporary folder, leaving out every path in `exclude` (and
 * what is under it).
 *
 * ```ts
 * const scratch = await scratchCopy(framework.workspace, { exclude: [framework.home] });
 * await scratch.remove();
 * ```
 */
export async function scratchCopy(workspace: string, options: { exclude?: readonly string[] } = {}): Promise<ScratchCopy> {
  const source = resolve(workspace);
  const excluded = (options.exclude ?? []).map((path) => resolve(path)).filter((path) => path !== source);
  const path = await mkdtemp(join(tmpdir(), "bub-replay-"));
  try {
    await cp(source, path, { recursive: true, verbatimSymlinks: true, filter: (from) => !excluded.some((skip) => inside(skip, resolve(from))) });
  } catch (error) {
    await rm(path, { recursive: true, force: true });
    throw error;
  }
  let removed = false;
  return {
    path,
    async remove() {
      if (removed) return;
      removed = true;
      await rm(path, { recursive: true, force: true });
    },
  };
}
