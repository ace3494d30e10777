/**
 * npm-style version ranges, for the range a plugin declares for the plugin API or its
 * `bub-ts` peer: `*`, `1.2.3`, `=1.2.3`, `1`, `1.x`, `1.2.*`, `^1.2.3`, `~1.2`, `>=1.2.3 <2`,
 * `>1`, `<=2.1`, `1.2.3 - 2.3`, and alternatives joined by `||`. A prerelease version
 * (`2.0.0-beta.1`) satisfies a range only through a comparator that names a prerelease of
 * the same major.minor.patch, as in npm.
 */

/** A parsed `major.minor.patch[-prerelease][+build]` version. */
export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: readonly (string | number)[];
}

type Operator = "<" | "<=" | ">" | ">=" | "=";
interface Comparator {
  readonly op: Operator;
  readonly version: Version;
}

const NUMBER = "0|[1-9]\\d*";
const PRERELEASE = "[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*";
const FULL = new RegExp(`^v?(${NUMBER})\\.(${NUMBER})\\.(${NUMBER})(?:-(${PRERELEASE}))?(?:\\+${PRERELEASE})?$`);
/** A version with parts left out or written as x/X/*: `1`, `1.x`, `1.2.*`, `*`. */
const PARTIAL = new RegExp(`^v?(${NUMBER}|[xX*])(?:\\.(${NUMBER}|[xX*]))?(?:\\.(${NUMBER}|[xX*]))?(?:-(${PRERELEASE}))?(?:\\+${PRERELEASE})?$`);

function prereleaseOf(text: string | undefined): (string | number)[] {
  return text ? text.split(".").map((part) => (/^\d+$/.test(part) ? Number(part) : part)) : [];
}

/** The version `text` names exactly (a leading `v` or `=` allowed); null when it is not one. */
export function parseVersion(text: string): Version | null {
  const match = FULL.exec(text.trim().replace(/^=/, ""));
  if (!match) return null;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), prerelease: prereleaseOf(match[4]) };
}

function compareIdentifiers(a: string | number, b: string | number): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative, zero or positive as `a` orders before, with or after `b` (build metadata ignored). */
export function compareVersions(a: Version, b: Version): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return core;
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    const x = a.prerelease[i];
    const y = b.prerelease[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const order = compareIdentifiers(x, y);
    if (order !== 0) return order;
  }
  return 0;
}

const version = (major: number, minor: number, patch: number, prerelease: (string | number)[] = []): Version => ({ major, minor, patch, prerelease });
/** The lowest version of `major.minor.patch`, below its prereleases: the exclusive upper bound npm uses. */
const floor = (major: number, minor: number, patch: number): Version => version(major, minor, patch, [0]);

interface LooseVersion {
  readonly parts: number; // how many of major, minor, patch were given (0 to 3)
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: (string | number)[];
}

function parsePartial(text: string): LooseVersion | null {
  const match = PARTIAL.exec(text);
  if (!match) return null;
  const given = [match[1], match[2], match[3]];
  let parts = given.findIndex((part) => part === undefined || /^[xX*]$/.test(part));
  if (parts === -1) parts = 3;
  // A number after a wildcard (`1.x.3`) is not a range npm writes.
  if (given.slice(parts).some((part) => part !== undefined && !/^[xX*]$/.test(part))) return null;
  const part = (i: number) => (i < parts ? Number(given[i]) : 0);
  const prerelease = parts === 3 ? prereleaseOf(match[4]) : [];
  return { parts, major: part(0), minor: part(1), patch: part(2), prerelease };
}

/** The comparators of one range element (`^1.2`, `>=1`, `1.x`, `1.2.3`); null when it is not one. */
function desugar(element: string): Comparator[] | null {
  const [, op = "", rest = ""] = /^(\^|~|>=|<=|>|<|=)?(.*)$/.exec(element) ?? [];
  const p = parsePartial(rest);
  if (!p) return null;
  const low = version(p.major, p.minor, p.patch, p.prerelease);
  if (p.parts === 0) return op === "<" || op === ">" ? [{ op: "<", version: floor(0, 0, 0) }] : [];
  // The first release past what the given parts cover: 1 → 2.0.0, 1.2 → 1.3.0.
  const pastGiven = p.parts === 1 ? version(p.major + 1, 0, 0) : version(p.major, p.minor + 1, 0);
  switch (op) {
    case "^": {
      const upper =
        p.major > 0 || p.parts === 1 ? floor(p.major + 1, 0, 0) : p.minor > 0 || p.parts === 2 ? floor(0, p.minor + 1, 0) : floor(0, 0, p.patch + 1);
      return [{ op: ">=", version: low }, { op: "<", version: upper }];
    }
    case "~":
      return [{ op: ">=", version: low }, { op: "<", version: p.parts === 1 ? floor(p.major + 1, 0, 0) : floor(p.major, p.minor + 1, 0) }];
    case ">=":
      return [{ op: ">=", version: low }];
    case "<":
      return [{ op: "<", version: p.parts === 3 ? low : floor(p.major, p.minor, p.patch) }];
    case ">":
      return [p.parts === 3 ? { op: ">", version: low } : { op: ">=", version: pastGiven }];
    case "<=":
      return [p.parts === 3 ? { op: "<=", version: low } : { op: "<", version: floor(pastGiven.major, pastGiven.minor, 0) }];
    default:
      return p.parts === 3 ? [{ op: "=", version: low }] : [{ op: ">=", version: low }, { op: "<", version: floor(pastGiven.major, pastGiven.minor, 0) }];
  }
}

/** The comparator sets of a range (any set may match), or null when the range is not understood. */
function parseRange(range: string): Comparator[][] | null {
  const sets: Comparator[][] = [];
  for (const alternative of range.split("||")) {
    // `>= 1.2` is `>=1.2`; `1.2 - 2` is a hyphen range.
    const text = alternative.trim().replace(/(\^|~|>=|<=|>|<|=)\s+/g, "$1");
    const [hyphen, start, end] = /^(\S+)\s+-\s+(\S+)$/.exec(text) ?? [];
    if (hyphen) {
      const from = desugar(`>=${start ?? ""}`);
      const to = desugar(`<=${end ?? ""}`);
      if (!from || !to) return null;
      sets.push([...from, ...to]);
      continue;
    }
    const set: Comparator[] = [];
    for (const element of text.split(/\s+/).filter(Boolean)) {
      const comparators = desugar(element);
      if (!comparators) return null;
      set.push(...comparators);
    }
    sets.push(set);
  }
  return sets;
}

/** Whether `range` is a version range this module understands. */
export function isValidRange(range: string): boolean {
  return parseRange(range) !== null;
}

function test(comparator: Comparator, v: Version): boolean {
  const order = compareVersions(v, comparator.version);
  switch (comparator.op) {
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
    case "=":
      return order === 0;
  }
}

function satisfiesSet(set: readonly Comparator[], v: Version, includePrerelease: boolean): boolean {
  if (!set.every((comparator) => test(comparator, v))) return false;
  if (v.prerelease.length === 0 || includePrerelease) return true;
  // npm: a prerelease only matches a range that names a prerelease of the same version.
  // The `-0` upper bounds of desugared ranges admit none: nothing of their version is below them.
  return set.some((c) => c.version.prerelease.length > 0 && c.version.major === v.major && c.version.minor === v.minor && c.version.patch === v.patch);
}

/**
 * Whether `versionText` lies in `range`. Null when either cannot be read (a range such as
 * `workspace:*` or a git URL, or a version that is not `major.minor.patch`). With
 * `includePrerelease`, a prerelease is judged by its order alone (npm's option of that name).
 */
export function satisfies(versionText: string, range: string, options: { includePrerelease?: boolean } = {}): boolean | null {
  const v = parseVersion(versionText);
  const sets = parseRange(range);
  if (!v || !sets) return null;
  return sets.some((set) => satisfiesSet(set, v, options.includePrerelease ?? false));
}
