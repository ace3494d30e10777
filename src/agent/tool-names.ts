/**
 * Close-match suggestions for a mistyped tool name: the ratio of Python's difflib
 * (`2 * matches / total length`, matches from the longest common blocks), so suggestions
 * agree with the reference runtime's.
 */

function longestMatch(a: string, b: string, aLo: number, aHi: number, bLo: number, bHi: number): [number, number, number] {
  let best: [number, number, number] = [aLo, bLo, 0];
  let lengths = new Map<number, number>();
  for (let i = aLo; i < aHi; i++) {
    const next = new Map<number, number>();
    for (let j = bLo; j < bHi; j++) {
      if (a[i] !== b[j]) continue;
      const length = (lengths.get(j - 1) ?? 0) + 1;
      next.set(j, length);
      if (length > best[2]) best = [i - length + 1, j - length + 1, length];
    }
    lengths = next;
  }
  return best;
}

function matchingCharacters(a: string, b: string, aLo = 0, aHi = a.length, bLo = 0, bHi = b.length): number {
  const [i, j, length] = longestMatch(a, b, aLo, aHi, bLo, bHi);
  if (length === 0) return 0;
  return length + matchingCharacters(a, b, aLo, i, bLo, j) + matchingCharacters(a, b, i + length, aHi, j + length, bHi);
}

/** Similarity of two strings in [0, 1]. */
export function similarity(a: string, b: string): number {
  const total = a.length + b.length;
  return total === 0 ? 1 : (2 * matchingCharacters(a, b)) / total;
}

/** Up to `limit` names at least `cutoff` similar to `name`, most similar first. */
export function closeToolNames(name: string, candidates: readonly string[], limit = 3, cutoff = 0.6): string[] {
  return candidates
    .map((candidate) => ({ candidate, score: similarity(name, candidate) }))
    .filter(({ score }) => score >= cutoff)
    .sort((left, right) => right.score - left.score)
    .slice(0, limit)
    .map(({ candidate }) => candidate);
}
