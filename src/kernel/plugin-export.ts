/**
 * What a plugin module exports and how the framework records it: the export (an object, a
 * factory function or a class), where it came from, and how it fared while loading.
 */
import type { BubPlugin } from "./hooks.ts";
import type { BubFramework } from "./framework.ts";

/** Where a registered plugin came from, as `bub hooks` and `bub plugins` report it. */
export type PluginOrigin = "builtin" | "project" | "workspace" | "config" | "manual";

/** How one plugin fared while loading. */
export interface PluginStatus {
  readonly name: string;
  readonly ok: boolean;
  readonly source: PluginOrigin;
  /** The file or package the plugin came from, when known. */
  readonly from?: string;
  readonly error?: Error;
}

/** A plugin object, or a factory (function or class) called with the framework. */
export type PluginExport = BubPlugin | ((framework: BubFramework) => BubPlugin | Promise<BubPlugin>);

function isClass(fn: Function): boolean {
  return /^class[\s{]/.test(Function.prototype.toString.call(fn));
}

/** The plugin object of an export: itself, a class constructed with `new`, or what a factory returns. */
export async function instantiatePlugin(plugin: PluginExport, framework: BubFramework): Promise<BubPlugin> {
  const made: unknown = typeof plugin !== "function" ? plugin : isClass(plugin) ? Reflect.construct(plugin, [framework]) : await plugin(framework);
  if (typeof made !== "object" || made === null) throw new TypeError(`plugin factory returned ${made === null ? "null" : typeof made}, expected a plugin object`);
  return made;
}
