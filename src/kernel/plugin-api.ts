/**
 * The plugin API's version, and the error a plugin gets when it asks for another one.
 * No imports and no side effects: `bub-ts` re-exports both from its entry.
 */

/**
 * The version of the contract plugins are written against: the hook names and their
 * arguments and results, and the types and helpers `bub-ts` exports for plugins (plugin,
 * tool, tape, settings, channel and sandbox types). The major number goes up with a change
 * that can break a plugin written for the previous one; the minor number with an addition a
 * plugin may come to rely on; the patch number with a fix of the contract's behaviour. A
 * plugin declares the range it supports as `"bub": { "api": "^2.0.0" }` in its package.json
 * (see docs/plugins.md#plugin-api-version).
 */
export const PLUGIN_API_VERSION = "2.3.0";

/** Where a plugin's package.json declared the range it supports. */
export type PluginApiField = "bub.api" | "peerDependencies.bub-ts";

/**
 * Why a plugin was not loaded: the range it declared does not include what is running
 * (`bub.api` is checked against {@link PLUGIN_API_VERSION}, a `bub-ts` peer dependency
 * range against the running bub-ts package's version). Its module was never imported.
 */
export class IncompatiblePluginError extends Error {
  override readonly name = "IncompatiblePluginError";
  /** The range the plugin asked for, as written. */
  readonly wanted: string;
  /** What is running: the plugin API version, or the bub-ts package version for a peer range. */
  readonly running: string;
  /** The package.json field the range came from. */
  readonly field: PluginApiField;
  /** Both versions in words, as `bub hooks` shows them: `wants plugin API ^2.0.0 (bub.api), running 1.0.0`. */
  readonly summary: string;

  constructor(plugin: string, wanted: string, running: string, field: PluginApiField) {
    const what = field === "bub.api" ? "plugin API" : "bub-ts";
    super(
      `plugin '${plugin}' supports ${what} ${wanted} (${field} in its package.json), but this bub-ts runs ${what} ${running}; it was not loaded — install a version of the plugin made for ${what} ${running}, or a bub-ts in ${wanted}`,
    );
    this.wanted = wanted;
    this.running = running;
    this.field = field;
    this.summary = `wants ${what} ${wanted} (${field}), running ${running}`;
  }
}
