/**
 * The closest names to a mistyped tool name by edit distance, so an unknown tool call is
 * answered with names the model can use. Case, `.` and `-` are ignored (`FS.READ` = `fs_read`).
 */

/** Levenshtein distance: insertions, deletions and substitutions, each costing 1. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

function normalName(name: string): string {
  return name.trim().toLowerCase().replace(/[.\-\s]/g, "_");
}

/**
 * The `limit` names of `candidates` nearest to `name` (fewest edits first, then by name),
 * however far they are; empty only when there are no candidates.
 *
 * ```ts
 * closestToolNames("fs_raed", ["bash", "fs_read", "fs_write"], 2); // ["fs_read", "fs_write"]
 * ```
 */
export function closestToolNames(name: string, candidates: Iterable<string>, limit = 3): string[] {
  const target = normalName(name);
  return [...new Set(candidates)]
    .filter((candidate) => candidate !== name)
    .map((candidate) => ({ candidate, distance: editDistance(target, normalName(candidate)) }))
    .sort((left, right) => left.distance - right.distance || left.candidate.localeCompare(right.candidate))
    .slice(0, Math.max(0, limit))
    .map(({ candidate }) => candidate);
}
