/**
 * Whether a discovered plugin was written for what is running, decided from its package.json
 * before its module is imported: `bub.api` against the plugin API version, else a `bub-ts`
 * peer dependency range against the running bub-ts package's version.
 */
import { readFile } from "node:fs/promises";
import { IncompatiblePluginError, PLUGIN_API_VERSION } from "../kernel/plugin-api.ts";
import type { PluginRequirement } from "./discovery.ts";

let packageVersion: Promise<string | null> | null = null;

/** The running bub-ts package's version, from package.json two folders above this module (src/ and dist/ alike); null when unreadable. */
export function runningPackageVersion(): Promise<string | null> {
  packageVersion ??= readFile(new URL("../../package.json", import.meta.url), "utf8").then(
    (text) => {
      const data: unknown = JSON.parse(text);
      const version = typeof data === "object" && data !== null && "version" in data ? data.version : null;
      return typeof version === "string" ? version : null;
    },
    () => null,
  );
  return packageVersion;
}

/** What the plugin's range is checked against. */
export interface RunningVersions {
  /** The plugin API version (default {@link PLUGIN_API_VERSION}). */
  readonly api?: string;
  /** The bub-ts package version (default: this package's). */
  readonly package?: string | null;
}

/**
 * Why the plugin `name` must not be loaded, or null when it may: an
 * {@link IncompatiblePluginError} when its range leaves out what is running, an error when
 * its `bub.api` is not a range. A `bub-ts` peer range this cannot read (`workspace:*`, a
 * URL) does not stop it: npm decided on it when it installed the plugin.
 */
export async function checkPluginRequirement(name: string, requires: PluginRequirement | undefined, running: RunningVersions = {}): Promise<Error | null> {
  if (!requires) return null;
  const version = requires.field === "bub.api" ? (running.api ?? PLUGIN_API_VERSION) : running.package !== undefined ? running.package : await runningPackageVersion();
  if (version === null) return null;
  const fits = await fitsRange(version, requires.range);
  if (fits === true) return null;
  if (fits === false) return new IncompatiblePluginError(name, requires.range, version, requires.field);
  if (requires.field === "peerDependencies.bub-ts") return null;
  return new Error(`plugin '${name}' declares bub.api ${JSON.stringify(requires.range)} in its package.json, which is not a version range; it was not loaded — write a range such as "^${PLUGIN_API_VERSION}"`);
}

/**
 * Whether `version` lies in the npm range `range` (semver's rules); null when either cannot
 * be read. A prerelease of bub-ts runs plugins written for its range like its release would.
 * semver is loaded only when a plugin declares a range.
 */
async function fitsRange(version: string, range: string): Promise<boolean | null> {
  const [{ default: satisfies }, { default: validRange }, { default: valid }] = await Promise.all([
    import("semver/functions/satisfies.js"),
    import("semver/ranges/valid.js"),
    import("semver/functions/valid.js"),
  ]);
  if (valid(version) === null || validRange(range) === null) return null;
  return satisfies(version, range, { includePrerelease: true });
}
