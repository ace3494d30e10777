import type { BubPlugin } from "./hooks.ts";
import { HOOK_NAMES, textModel } from "./hook-table.ts";

/** Wraps one call of one hook implementation (see {@link HookRegistry.wrapCalls}). */
export type HookCallWrapper = (hook: string, plugin: string, call: () => unknown) => unknown;

/** What an implementation's `next` is: it runs the implementations below it. */
export type Next = (args?: unknown) => Promise<unknown>;

/** A plugin's implementation of `hook`, with any hook's arguments; `answer` converts what it answers. */
export interface StoredImpl {
  readonly plugin: string;
  readonly hook: string;
  readonly call: (args: unknown, next?: Next) => unknown;
  readonly answer?: (value: unknown) => unknown;
}

const KNOWN = new Set<string>(HOOK_NAMES);

/** The registered plugins and, per hook, their implementations in call order (`HookRuntime` calls them). */
export class HookRegistry {
  readonly #plugins: { name: string; plugin: BubPlugin }[] = [];
  /** Per hook, implementations in call order (latest registered first). Rebuilt on change. */
  readonly #impls = new Map<string, StoredImpl[]>();
  /** The model hook's implementations (see {@link implementations}). */
  #model: StoredImpl[] = [];
  /** Hook names added with {@link addHookNames}. */
  readonly #extraHooks = new Set<string>();
  #callWrapper: HookCallWrapper | null = null;

  /** Registers a plugin under `name`; returns a function that unregisters it. */
  register(plugin: BubPlugin, name: string): () => void {
    if (this.#plugins.some((entry) => entry.name === name)) throw new Error(`a plugin named '${name}' is already registered`);
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

  /**
   * Runs every hook implementation through `wrapper` (one per runtime; tracing times each
   * plugin's hooks with it), which must call `call()` once and return what it returns
   * (synchronously for a sync hook). Returns a function that removes it.
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
    const model: StoredImpl[] = [];
    for (const { name, plugin } of [...this.#plugins].reverse()) {
      for (const key of [...KNOWN, ...this.#extraHooks]) {
        const fn: unknown = Reflect.get(plugin, key);
        if (typeof fn !== "function") continue;
        let list = this.#impls.get(key);
        if (!list) this.#impls.set(key, (list = []));
        const bound: StoredImpl["call"] = fn.bind(plugin);
        const wrapper = this.#callWrapper;
        const impl: StoredImpl = { plugin: name, hook: key, call: wrapper ? (args, next) => wrapper(key, name, () => bound(args, next)) : bound };
        list.push(impl);
        // The one place runModel is adapted to the model hook; a plugin's runModel wins over its runModelStream.
        if (key === "runModel") model.push({ plugin: name, hook: key, call: (args, next) => impl.call(args, next && textModel.next(next)), answer: textModel.answer });
        else if (key === "runModelStream" && typeof Reflect.get(plugin, "runModel") !== "function") model.push(impl);
      }
    }
    this.#model = model;
  }

  /** Registered plugins in registration order. */
  get plugins(): readonly { name: string; plugin: BubPlugin }[] {
    return this.#plugins;
  }

  /**
   * A hook's implementations in call order (latest registered first). Those of the model hook
   * `runModelStream` are each plugin's `runModel`, adapted, else its `runModelStream`.
   */
  implementations(hook: string): readonly StoredImpl[] {
    return (hook === "runModelStream" ? this.#model : this.#impls.get(hook)) ?? [];
  }

  /** `{ hook: [plugin names in call order] }` for every hook with an implementation, sorted by hook. */
  hookReport(): Record<string, string[]> {
    return Object.fromEntries([...this.#impls].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([hook, impls]) => [hook, impls.map((impl) => impl.plugin)]));
  }
}
