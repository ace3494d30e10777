/**
 * Where a path on the host really leads: every symbolic link on the way followed, including
 * links whose target does not exist yet (writing through such a link creates its target)
 * and links in the folders above. What the approval policy judges and what the host
 * sandbox writes to, so both look at the same file.
 */
import { lstat, readlink } from "node:fs/promises";
import { dirname, isAbsolute, join, parse, resolve, sep } from "node:path";
import { BubError } from "../kernel/errors.ts";

/** How many symbolic links one path may pass through, as Linux's own bound (`ELOOP`). */
export const MAX_SYMBOLIC_LINKS = 40;

function codeOf(error: unknown): unknown {
  return typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
}

/** A path's names after its root, `.` and empty ones dropped; `..` kept (it is resolved in order). */
function namesOf(path: string): string[] {
  return path.split(sep).filter((name) => name !== "" && name !== ".");
}

/**
 * `path` (made absolute against the current directory) with every symbolic link resolved,
 * dangling ones too: a link's target is read and followed even when nothing exists there,
 * a relative target is taken from the link's own folder, and links met inside a target are
 * followed in turn. From the first name that does not exist, the rest is appended as
 * written. Unlike `realpath`, this never fails because the file is missing.
 *
 * ```ts
 * await linkTarget("/work/ws/notes.txt"); // "/tmp/outside/new.txt" when notes.txt links there
 * ```
 * @throws BubError `invalid_input` past {@link MAX_SYMBOLIC_LINKS} links (a loop, most likely);
 *   other file-system errors (`EACCES`) as they come.
 */
export async function linkTarget(path: string, maxLinks: number = MAX_SYMBOLIC_LINKS): Promise<string> {
  const absolute = resolve(path);
  let done = parse(absolute).root;
  // A stack: the next name to look at is last.
  const pending = namesOf(absolute.slice(done.length)).reverse();
  let links = 0;
  let missing = false;
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    // `done` never holds a link, so its parent is the real parent.
    if (name === "..") {
      done = dirname(done);
      continue;
    }
    const next = join(done, name);
    if (missing) {
      done = next;
      continue;
    }
    const info = await lstat(next).catch((error: unknown) => {
      if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR") return null;
      throw error;
    });
    if (!info?.isSymbolicLink()) {
      missing = info === null;
      done = next;
      continue;
    }
    if (++links > maxLinks) {
      throw new BubError("invalid_input", `${absolute}: too many levels of symbolic links (more than ${maxLinks}, a loop?); fix the links or use the file's real path`, {
        details: { path: absolute, code: "ELOOP" },
      });
    }
    // Taken name by name, not normalized: `..` after a link in the target is that link's parent.
    const target = await readlink(next);
    const root = isAbsolute(target) ? parse(target).root : "";
    if (root) done = root;
    pending.push(...namesOf(target.slice(root.length)).reverse());
  }
  return done;
}
