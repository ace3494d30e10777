import { createLogger } from "./log.ts";
import { HOOK_NAMES, type BubPlugin, type HookArgs, type HookName, type HookValue } from "./hooks.ts";
import type { Envelope } from "./envelope.ts";
import { blamesPlugin, PluginHookError } from "./hook-error.ts";
import { isThenable } from "./guards.ts";

const log = createLogger("bub:hooks");

/** Wraps one call of one hook implementation (see {@link HookRuntime.wrapCalls}). */
export type HookCallWrapper = (hook: string, plugin: string, call: () => unknown) => unknown;

/**
 * One hook implementation of one plugin, as the runtime calls it: with hook `K`'s argument
 * object (and `next` for a chained hook). What it answers is checked by the caller.
 */
export interface HookImpl<K extends HookName = HookName> {
  readonly plugin: string;
  readonly call: (args: HookArgs<K>, next?: unknown) => unknown;
}

/** A plugin's implementation with any hook's arguments (how the runtime stores them). */
interface StoredImpl {
  readonly plugin: string;
  readonly call: (args: unknown, next?: unknown) => unknown;
}

/**
 * The one place the runtime takes a plugin's answer as its hook's declared type: TypeScript
 * checks a plugin's hooks against {@link BubHooks} when it is compiled, and a JavaScript
 * plugin is trusted (the callers that depend on an answer's shape check it at run time).
 */
function dispatch<K extends HookName>(_hook: K, value: unknown): HookValue<K> {
  return value as never;
}

const KNOWN = new Set<string>(HOOK_NAMES);

/**
 * Calls plugin hooks with the reference runtime's semantics: the plugin registered last
 * runs first; firstresult calls stop at the first non-null answer; broadcast calls collect
 * every answer (null included); exceptions propagate, except from `onError` observers, as a
 * {@link PluginHookError} naming the plugin and the hook (the builtin's as they are).
 */
export class HookRuntime {
  readonly #plugins: { name: string; plugin: BubPlugin }[] = [];
  /** Per hook, implementations in call order (latest registered first). Rebuilt on change. */
  readonly #impls = new Map<string, StoredImpl[]>();
  /** Hook names added with {@link addHookNames}. */
  readonly #extraHooks = new Set<string>();

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

  /**
   * Lets this runtime call hooks a third party declares (in `BubHooks`, by declaration
   * merging); plugins registered before and after are both looked up for them.
   */
  addHookNames(...names: string[]): void {
    for (const name of names) if (!KNOWN.has(name)) this.#extraHooks.add(name);
    this.#rebuild();
  }

  #callWrapper: HookCallWrapper | null = null;

  /**
   * Runs every hook implementation through `wrapper` (one per runtime; tracing uses it to
   * time each plugin's hooks). `wrapper` must call `call()` once and return what it returns,
   * synchronously for a synchronous hook. Returns a function that removes it.
   */
  wrapCalls(wrapper: HookCallWrapper): () => void {
    if (this.#callWrapper) throw new Error("hook calls are already wrapped");
    this.#callWrapper = wrapper;
    this.#rebuild();
    return () => {
      if (this.#callWrapper !== wrapper) return;
      this.#callWrapper = null;
      this.#rebuild();
    };
  }

  #rebuild(): void {
    this.#impls.clear();
    for (const { name, plugin } of [...this.#plugins].reverse()) {
      for (const key of [...KNOWN, ...this.#extraHooks]) {
        const fn: unknown = Reflect.get(plugin, key);
        if (typeof fn !== "function") continue;
        let list = this.#impls.get(key);
        if (!list) this.#impls.set(key, (list = []));
        const call: StoredImpl["call"] = fn.bind(plugin);
        const wrapper = this.#callWrapper;
        list.push({ plugin: name, call: wrapper ? (args, next) => wrapper(key, name, () => call(args, next)) : call });
      }
    }
  }

  /** Registered plugins in registration order. */
  get plugins(): readonly { name: string; plugin: BubPlugin }[] {
    return this.#plugins;
  }

  #stored(hook: string): readonly StoredImpl[] {
    return this.#impls.get(hook) ?? [];
  }

  /** Implementations of a hook in call order. */
  implementations<K extends HookName>(hook: K): readonly HookImpl<K>[] {
    return this.#impls.get(hook) ?? [];
  }

  /**
   * Awaits each implementation in turn; returns the first answer that is not null/undefined.
   * Each implementation also gets `next(args?)`, which runs the implementations below it
   * (same semantics, `args` by default) and resolves with their answer. Once an
   * implementation has called `next`, its own answer is final, even null; a second call
   * to `next` rejects.
   */
  async callFirst<K extends HookName>(hook: K, args: HookArgs<K>): Promise<HookValue<K> | undefined> {
    const value = await this.#chain(hook, this.#stored(hook), 0, args);
    return value === undefined ? undefined : dispatch(hook, value);
  }

  async #chain(hook: string, impls: readonly StoredImpl[], from: number, args: unknown): Promise<unknown> {
    for (let index = from; index < impls.length; index++) {
      const impl = impls[index];
      let called = false;
      const next = (nextArgs: unknown = args): Promise<unknown> => {
        if (called) return Promise.reject(new Error(`next() called more than once in ${hook}`));
        called = true;
        return this.#chain(hook, impls, index + 1, nextArgs).catch((error: unknown) => {
          // Already blamed on the plugin below: the caller passing it on is not at fault.
          if (typeof error === "object" && error !== null) this.#passedOn.add(error);
          throw error;
        });
      };
      const value = await this.#invoke(impl, hook, args, next);
      if (called || (value !== null && value !== undefined)) return value ?? undefined;
    }
    return undefined;
  }

  /** Errors that came out of a `next()` call, so the plugin that rethrows them is not blamed. */
  readonly #passedOn = new WeakSet<object>();

  /** Calls one implementation; what it throws (or rejects with) comes back as a {@link PluginHookError} naming it. */
  async #invoke(impl: StoredImpl, hook: string, args: unknown, next?: unknown): Promise<unknown> {
    try {
      return await impl.call(args, next);
    } catch (error) {
      throw this.#blame(impl, hook, error);
    }
  }

  #blame(impl: StoredImpl, hook: string, error: unknown): unknown {
    if (typeof error === "object" && error !== null && this.#passedOn.has(error)) return error;
    return blamesPlugin(impl.plugin, error) ? new PluginHookError(impl.plugin, hook, error) : error;
  }

  /** Every implementation's answer, in call order, null and undefined included. */
  async callMany<K extends HookName>(hook: K, args: HookArgs<K>): Promise<(HookValue<K> | undefined)[]> {
    const answers: (HookValue<K> | undefined)[] = [];
    for (const impl of this.#stored(hook)) {
      const value = await this.#invoke(impl, hook, args);
      answers.push(value === undefined ? undefined : dispatch(hook, value));
    }
    return answers;
  }

  /** Calls every implementation in call order, each awaited before the next, for hooks whose answers nobody reads. */
  async callEach<K extends HookName>(hook: K, args: HookArgs<K>): Promise<void> {
    for (const impl of this.#stored(hook)) await this.#invoke(impl, hook, args);
  }

  /**
   * Like {@link callEach}, but an implementation that throws does not stop the others:
   * resolves with the errors (each a {@link PluginHookError} for a plugin's), in call order.
   */
  async callEachSettled<K extends HookName>(hook: K, args: HookArgs<K>): Promise<unknown[]> {
    const errors: unknown[] = [];
    for (const impl of this.#stored(hook)) {
      try {
        await this.#invoke(impl, hook, args);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }

  /** Like {@link callFirst}, synchronously: a Promise answer is skipped with a warning. */
  callFirstSync<K extends HookName>(hook: K, args: HookArgs<K>): HookValue<K> | undefined {
    for (const value of this.eachSync(hook, args)) if (value !== null && value !== undefined) return value;
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
    const impls = options.order === "registration" ? [...this.#stored(hook)].reverse() : this.#stored(hook);
    for (const impl of impls) {
      let value: unknown;
      try {
        value = impl.call(args);
      } catch (error) {
        throw this.#blame(impl, hook, error);
      }
      if (!isThenable(value)) {
        yield value === undefined ? undefined : dispatch(hook, value);
        continue;
      }
      // Swallow a late rejection: the answer is discarded, it must not crash the process.
      Promise.resolve(value).catch((error: unknown) => log.debug(`hook.async_rejected hook=${hook} adapter=${impl.plugin}`, error));
      log.warn(`hook.async_not_supported hook=${hook} adapter=${impl.plugin}`);
    }
  }

  /** Tells every `onError` observer; an observer that throws is logged and the rest still run. */
  async notifyError(stage: string, error: unknown, message: Envelope | null = null): Promise<void> {
    for (const impl of this.#stored("onError")) {
      try {
        await impl.call({ stage, error, message });
      } catch (failure) {
        log.warn(`hook.on_error_failed stage=${stage} adapter=${impl.plugin}`, failure);
      }
    }
  }

  /**
   * Which model hook runs: the first plugin in call order that has `runModel` or
   * `runModelStream` decides (`runModel` checked first per plugin).
   */
  modelPath(): "runModel" | "runModelStream" | null {
    for (const { plugin } of [...this.#plugins].reverse()) {
      if (typeof plugin.runModel === "function") return "runModel";
      if (typeof plugin.runModelStream === "function") return "runModelStream";
    }
    return null;
  }

  /** `{ hook: [plugin names in call order] }` for every hook with an implementation, sorted by hook. */
  hookReport(): Record<string, string[]> {
    const report: Record<string, string[]> = {};
    for (const [hook, impls] of [...this.#impls.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) report[hook] = impls.map((impl) => impl.plugin);
    return report;
  }
}
