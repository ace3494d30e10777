import type { BubPlugin } from "./hooks.ts";
import type { HookRuntime } from "./runtime.ts";
import type { PluginModule, PluginOrigin, PluginProblem } from "./plugin-source.ts";
import { createLogger } from "./log.ts";

const log = createLogger("bub:framework");

/** How one plugin fared while loading. */
export interface PluginStatus {
  readonly name: string;
  readonly ok: boolean;
  readonly source: PluginOrigin;
  readonly error?: Error;
}

/** A plugin object, or a factory (function or class) called with the framework. */
export type PluginExport<F> = BubPlugin | ((framework: F) => BubPlugin | Promise<BubPlugin>);

function isClass(fn: Function): boolean {
  return /^class[\s{]/.test(Function.prototype.toString.call(fn));
}

/**
 * Registers plugins on a hook runtime and remembers how each one fared: a plugin that fails
 * to import or initialise is recorded with its error and skipped.
 */
export class PluginRegistry<F> {
  readonly #status = new Map<string, PluginStatus>();
  readonly runtime: HookRuntime;
  readonly #framework: F;

  constructor(runtime: HookRuntime, framework: F) {
    this.runtime = runtime;
    this.#framework = framework;
  }

  /** Registers a plugin object or factory under `name`; returns a function that unregisters it. */
  async register(plugin: PluginExport<F>, name?: string): Promise<() => void> {
    const instance = typeof plugin === "function" ? await this.#instantiate(plugin) : plugin;
    const pluginName = name ?? instance.name ?? `plugin-${this.runtime.plugins.length}`;
    const unregister = this.runtime.register(instance, pluginName);
    if (!this.#status.has(pluginName)) this.#status.set(pluginName, { name: pluginName, ok: true, source: "manual" });
    return unregister;
  }

  /** Imports and registers one discovered module (or the builtin plugin); failures are recorded, not thrown. */
  async load(module: Pick<PluginModule, "name" | "fallbackName" | "load"> & { origin: PluginOrigin }): Promise<void> {
    let exported: unknown;
    try {
      exported = await module.load();
    } catch (error) {
      return this.fail({ name: module.name ?? module.fallbackName, error: asError(error) }, module.origin, "load");
    }
    try {
      const instance = typeof exported === "function" ? await this.#instantiate(exported) : exported;
      if (typeof instance !== "object" || instance === null) throw new TypeError(`module exports ${typeof instance}, expected a plugin object or factory`);
      const plugin = instance as BubPlugin;
      const pluginName = module.name ?? plugin.name ?? module.fallbackName;
      this.runtime.register(plugin, pluginName);
      this.#status.set(pluginName, { name: pluginName, ok: true, source: module.origin });
    } catch (error) {
      this.fail({ name: module.name ?? module.fallbackName, error: asError(error) }, module.origin, "initialize");
    }
  }

  /** Records a plugin that could not be loaded. */
  fail(problem: PluginProblem, source: PluginOrigin, stage: "load" | "initialize" = "load"): void {
    log.warn(`Failed to ${stage} plugin '${problem.name}'`, problem.error);
    this.#status.set(problem.name, { name: problem.name, ok: false, source, error: problem.error });
  }

  /** Every plugin's load status, in load order. */
  get status(): readonly PluginStatus[] {
    return [...this.#status.values()];
  }

  async #instantiate(factory: Function): Promise<BubPlugin> {
    const made: unknown = isClass(factory) ? Reflect.construct(factory, [this.#framework]) : await factory(this.#framework);
    if (typeof made !== "object" || made === null) throw new TypeError(`plugin factory returned ${made === null ? "null" : typeof made}, expected a plugin object`);
    return made as BubPlugin;
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
