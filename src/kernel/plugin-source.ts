/**
 * What the kernel needs to load plugins, declared here and implemented outside the kernel
 * (`src/plugins/` finds and imports plugin modules; the composition root passes it in).
 */

/** Where a registered plugin came from, as `bub hooks` and `bub plugins` report it. */
export type PluginOrigin = "builtin" | "project" | "workspace" | "config" | "manual";

/** One plugin module a {@link PluginSource} found, not imported yet. */
export interface PluginModule {
  /** The name to register under; null: the plugin's own `name`, else {@link fallbackName}. */
  readonly name: string | null;
  /** The name used when neither the source nor the plugin names it. */
  readonly fallbackName: string;
  readonly origin: Exclude<PluginOrigin, "builtin" | "manual">;
  /** Imports the module and answers its default export: a plugin object or a factory. */
  load(): Promise<unknown>;
}

/** A problem met while discovering plugins (an unreadable package.json, say). */
export interface PluginProblem {
  readonly name: string;
  readonly error: Error;
}

/** Finds the plugins registered after the builtin plugin, in registration order. */
export interface PluginSource {
  discover(): Promise<{ readonly modules: readonly PluginModule[]; readonly problems: readonly PluginProblem[] }>;
}
