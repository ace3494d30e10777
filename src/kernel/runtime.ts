import { createLogger } from "./log.ts";
import { HOOK_NAMES, type BubPlugin, type HookArgs, type HookName, type HookValue } from "./hooks.ts";
import type { Envelope } from "./envelope.ts";

const log = createLogger("bub:hooks");

/** One hook implementation of one plugin. */
export interface HookImpl {
  readonly plugin: string;
  readonly call: (args: never) => unknown;
}

/** A value, or a promise of it when some implementation was async. */
export type Awaitable<T> = T | Promise<T>;

/** True for promises and other thenables. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as PromiseLike<unknown>).then === "function";
}

/**
 * Calls plugin hooks with the reference runtime's semantics: the plugin registered last
 * runs first; firstresult calls stop at the first non-null answer; broadcast calls collect
 * every answer (null included); exceptions propagate, except from `onError` observers.
 */
export class HookRuntime {
  readonly #plugins: { name: string; plugin: BubPlugin }[] = [];
  /** Per hook, implementations in call order (latest registered first). Rebuilt on change. */
  readonly #impls = new Map<string, HookImpl[]>();
  #modelPath: "runModel" | "runModelStream" | null | undefined;

  /** Registers a plugin under `name`; returns a function that unregisters it. */
  register(plugin: BubPlugin, name: string): () => void {
    if (this.#plugins.some((entry) => entry.name === name)) {
      throw new Error(`a plugin named '${name}' is already registered`);
    }
    const entry = { name, plugin };
    this.#plugins.push(entry);
    this.#rebuild();
    return () => {
      const index = this.#plugins.indexOf(entry);
      if (index >= 0) this.#plugins.splice(index, 1);
      this.#rebuild();
    };
  }

  #rebuild(): void {
    this.#impls.clear();
    this.#modelPath = undefined;
    for (let index = this.#plugins.length - 1; index >= 0; index--) {
      const { name, plugin } = this.#plugins[index]!;
      for (const key of hookKeysOf(plugin)) {
        const fn = (plugin as Record<string, unknown>)[key] as (args: never) => unknown;
        let list = this.#impls.get(key);
        if (!list) this.#impls.set(key, (list = []));
        list.push({ plugin: name, call: fn.bind(plugin) });
      }
    }
  }

  /** Registered plugins in registration order. */
  get plugins(): readonly { name: string; plugin: BubPlugin }[] {
    return this.#plugins;
  }

  /** Whether any plugin implements the hook (a stage nobody implements can skip building its arguments). */
  implements(hook: HookName): boolean {
    return this.#impls.has(hook);
  }

  /** Implementations of a hook in call order. */
  implementations(hook: string): readonly HookImpl[] {
    return this.#impls.get(hook) ?? EMPTY;
  }

  /**
   * {@link callFirst} without a promise when every implementation answers synchronously:
   * the turn pipeline's hot path uses this to skip microtask hops. A promise answer of the
   * last implementation is handed back as it is, so "no answer" may be null here (callFirst
   * always gives undefined).
   */
  firstOf<K extends HookName>(hook: K, args: HookArgs<K>): Awaitable<HookValue<K> | undefined> {
    const impls = this.implementations(hook);
    for (let index = 0; index < impls.length; index++) {
      const value = impls[index]!.call(args as never);
      if (isThenable(value)) return this.#firstLater(impls, index, value, args) as Promise<HookValue<K> | undefined>;
      if (value !== null && value !== undefined) return value as HookValue<K>;
    }
    return undefined;
  }

  #firstLater(impls: readonly HookImpl[], index: number, pending: PromiseLike<unknown>, args: unknown): Promise<unknown> {
    // The last implementation answered with a promise (the usual case: one model, one
    // policy): nothing to try after it, so its promise is the answer (no extra layer).
    if (index === impls.length - 1) return Promise.resolve(pending);
    return this.#firstAsync(impls, index, pending, args);
  }

  async #firstAsync(impls: readonly HookImpl[], index: number, pending: PromiseLike<unknown>, args: unknown): Promise<unknown> {
    let value = await pending;
    if (value !== null && value !== undefined) return value;
    for (index++; index < impls.length; index++) {
      value = impls[index]!.call(args as never);
      if (isThenable(value)) value = await value;
      if (value !== null && value !== undefined) return value;
    }
    return undefined;
  }

  /** {@link callMany} without a promise when every implementation answers synchronously. */
  allOf<K extends HookName>(hook: K, args: HookArgs<K>): Awaitable<(HookValue<K> | undefined)[]> {
    const impls = this.implementations(hook);
    const results: unknown[] = new Array(impls.length);
    for (let index = 0; index < impls.length; index++) {
      const value = impls[index]!.call(args as never);
      if (isThenable(value)) return this.#allLater(impls, index, value, args, results) as Promise<(HookValue<K> | undefined)[]>;
      results[index] = value;
    }
    return results as (HookValue<K> | undefined)[];
  }

  #allLater(impls: readonly HookImpl[], index: number, pending: PromiseLike<unknown>, args: unknown, results: unknown[]): Promise<unknown[]> {
    // As in #firstLater: the last implementation's promise needs one reaction, no async function.
    if (index === impls.length - 1) {
      return Promise.resolve(pending).then((value) => {
        results[index] = value;
        return results;
      });
    }
    return this.#allAsync(impls, index, pending, args, results);
  }

  /**
   * Calls every implementation in order like {@link allOf}, for hooks whose answers nobody
   * reads (saveState, dispatchOutbound): a promise only when an implementation answered with
   * one, and then the last implementation's promise itself, with no results collected.
   */
  eachOf<K extends HookName>(hook: K, args: HookArgs<K>): Awaitable<void> {
    const impls = this.implementations(hook);
    for (let index = 0; index < impls.length; index++) {
      const value = impls[index]!.call(args as never);
      if (isThenable(value)) return index === impls.length - 1 ? (Promise.resolve(value) as Promise<void>) : this.#eachAsync(impls, index, value, args);
    }
    return undefined;
  }

  async #eachAsync(impls: readonly HookImpl[], index: number, pending: PromiseLike<unknown>, args: unknown): Promise<void> {
    await pending;
    for (index++; index < impls.length; index++) {
      const value = impls[index]!.call(args as never);
      if (isThenable(value)) await value;
    }
  }

  async #allAsync(impls: readonly HookImpl[], index: number, pending: PromiseLike<unknown>, args: unknown, results: unknown[]): Promise<unknown[]> {
    results[index] = await pending;
    for (index++; index < impls.length; index++) {
      let value = impls[index]!.call(args as never);
      if (isThenable(value)) value = await value;
      results[index] = value;
    }
    return results;
  }

  /** Awaits each implementation in turn; returns the first answer that is not null/undefined. */
  async callFirst<K extends HookName>(hook: K, args: HookArgs<K>): Promise<HookValue<K> | undefined> {
    const value = await this.firstOf(hook, args);
    return value === null ? undefined : value;
  }

  /** Every implementation's answer, in call order, null and undefined included. */
  async callMany<K extends HookName>(hook: K, args: HookArgs<K>): Promise<(HookValue<K> | undefined)[]> {
    return this.allOf(hook, args);
  }

  /** Like {@link callFirst}, synchronously: a Promise answer is skipped with a warning. */
  callFirstSync<K extends HookName>(hook: K, args: HookArgs<K>): HookValue<K> | undefined {
    for (const impl of this.implementations(hook)) {
      const value = this.#syncValue(hook, impl, args);
      if (value !== null && value !== undefined && value !== SKIPPED) return value as HookValue<K>;
    }
    return undefined;
  }

  /** Like {@link callMany}, synchronously: Promise answers are skipped (left out) with a warning. */
  callManySync<K extends HookName>(hook: K, args: HookArgs<K>, options: { order?: "call" | "registration" } = {}): (HookValue<K> | undefined)[] {
    return [...this.eachSync(hook, args, options)];
  }

  /**
   * Calls a hook's implementations one at a time as the caller iterates, so the caller can
   * act on each answer before the next implementation runs. Promise answers are skipped.
   */
  *eachSync<K extends HookName>(hook: K, args: HookArgs<K>, options: { order?: "call" | "registration" } = {}): Generator<HookValue<K> | undefined> {
    const impls = options.order === "registration" ? [...this.implementations(hook)].reverse() : this.implementations(hook);
    for (const impl of impls) {
      const value = this.#syncValue(hook, impl, args);
      if (value !== SKIPPED) yield value as HookValue<K>;
    }
  }

  #syncValue(hook: string, impl: HookImpl, args: unknown): unknown {
    const value = impl.call(args as never);
    if (isThenable(value)) {
      // Swallow a late rejection: the answer is discarded, it must not crash the process.
      Promise.resolve(value).catch((error: unknown) => log.debug(`hook.async_rejected hook=${hook} adapter=${impl.plugin}`, error));
      log.warn(`hook.async_not_supported hook=${hook} adapter=${impl.plugin}`);
      return SKIPPED;
    }
    return value;
  }

  /** Tells every `onError` observer; an observer that throws is logged and the rest still run. */
  async notifyError(stage: string, error: unknown, message: Envelope | null = null): Promise<void> {
    for (const impl of this.implementations("onError")) {
      try {
        const value = impl.call({ stage, error, message } as never);
        if (isThenable(value)) await value;
      } catch (failure) {
        log.warn(`hook.on_error_failed stage=${stage} adapter=${impl.plugin}`, failure);
      }
    }
  }

  /**
   * Which model hook runs: the first plugin in call order that has `runModel` or
   * `runModelStream` decides (`runModel` checked first per plugin). Cached per registry state.
   */
  modelPath(): "runModel" | "runModelStream" | null {
    if (this.#modelPath !== undefined) return this.#modelPath;
    this.#modelPath = null;
    for (let index = this.#plugins.length - 1; index >= 0; index--) {
      const { plugin } = this.#plugins[index]!;
      if (typeof plugin.runModel === "function") return (this.#modelPath = "runModel");
      if (typeof plugin.runModelStream === "function") return (this.#modelPath = "runModelStream");
    }
    return null;
  }

  /** `{ hook: [plugin names in call order] }` for every hook with an implementation, sorted by hook. */
  hookReport(): Record<string, string[]> {
    const report: Record<string, string[]> = {};
    for (const hook of [...this.#impls.keys()].sort()) report[hook] = this.#impls.get(hook)!.map((impl) => impl.plugin);
    return report;
  }
}

const EMPTY: readonly HookImpl[] = Object.freeze([]);
const SKIPPED = Symbol("skipped");
const KNOWN = new Set<string>(HOOK_NAMES);

/** Hook names a plugin implements: its own and inherited (class) methods whose names are hooks. */
function hookKeysOf(plugin: object): string[] {
  const keys: string[] = [];
  for (const key of KNOWN) if (typeof (plugin as Record<string, unknown>)[key] === "function") keys.push(key);
  for (const key of extraHooks) if (typeof (plugin as Record<string, unknown>)[key] === "function") keys.push(key);
  return keys;
}

const extraHooks = new Set<string>();

/** Lets a third party add hook names (declared in `BubHooks` by declaration merging). */
export function addHookNames(...names: string[]): void {
  for (const name of names) if (!KNOWN.has(name)) extraHooks.add(name);
}
