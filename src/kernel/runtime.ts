import { createLogger } from "./log.ts";
import type { HookArgs, HookName, HookValue } from "./hooks.ts";
import { HookRegistry, type Next, type StoredImpl } from "./hook-registry.ts";
import { Combination, HOOK_TABLE, checkAnswer, type AsyncHook, type HookResult, type RunSpec, type SyncHook, type TableHook } from "./hook-table.ts";
import { blamesPlugin, PluginHookError } from "./hook-error.ts";
import { isThenable } from "./guards.ts";

const log = createLogger("bub:hooks");

/** The table's entries by name: a map lookup per call stays cheap however many hooks the table has. */
const SPECS: ReadonlyMap<string, RunSpec> = new Map(Object.entries(HOOK_TABLE));
const specOf = (name: TableHook): RunSpec => SPECS.get(name) ?? HOOK_TABLE[name];

/**
 * The one place the runtime takes a plugin's answer as its hook's declared type: TypeScript
 * checks a plugin's hooks when it is compiled; the hook table checks what callers rely on.
 */
function dispatch<T>(value: unknown): T {
  return value as never;
}

/** A hook a third party declares (see {@link HookRuntime.addHookNames}): not in the table. */
type ThirdPartyHook = Exclude<HookName, TableHook>;

export type { HookCallWrapper } from "./hook-registry.ts";

/**
 * Calls plugin hooks as the hook table (`hook-table.ts`) declares them: the plugin
 * registered last runs first; an exception comes out as a {@link PluginHookError} naming the
 * plugin and the hook (the builtin's as they are), unless the hook does not fail the turn.
 */
export class HookRuntime extends HookRegistry {
  /** Errors that came out of a `next()` call, so the plugin that rethrows them is not blamed. */
  readonly #passedOn = new WeakSet<object>();

  /** A hook's implementations in the order its spec says (a snapshot: registering during a call changes the next one). */
  #ordered(hook: string, spec: RunSpec): readonly StoredImpl[] {
    const impls = this.implementations(hook);
    return spec.order === "registration" ? [...impls].reverse() : impls;
  }

  /**
   * Calls hook `name` as the hook table declares: combines the answers ({@link HookResult}),
   * checks them (`TypeError: hook.<name> must return …`), fails or goes on when one throws.
   */
  call<K extends AsyncHook>(name: K, args: HookArgs<K>): Promise<HookResult<K>> {
    return dispatch(this.#run(name, specOf(name), args));
  }

  /** {@link call} for the sync-only hooks: a Promise answer is skipped with `hook.async_not_supported`. */
  callSync<K extends SyncHook>(name: K, args: HookArgs<K>): HookResult<K> {
    const spec = specOf(name);
    const combination = new Combination(name, spec, args);
    for (const impl of this.#ordered(name, spec)) {
      let value = this.#invoke(impl, combination.args);
      if (isThenable(value)) {
        // Swallow a late rejection: the answer is discarded, it must not crash the process.
        Promise.resolve(value).catch((error: unknown) => log.debug(`hook.async_rejected hook=${name} adapter=${impl.plugin}`, error));
        log.warn(`hook.async_not_supported hook=${name} adapter=${impl.plugin}`);
        value = undefined;
      }
      if (combination.take(value, impl.plugin)) break;
    }
    return dispatch(combination.result());
  }

  /** A third party's hook (see {@link addHookNames}): the first answer, each implementation getting `next()`. */
  callFirst<K extends ThirdPartyHook>(name: K, args: HookArgs<K>): Promise<HookValue<K> | undefined> {
    return dispatch(this.#run(name, { combine: "chain", failsTurn: true }, args));
  }

  /** A third party's hook: every answer in call order, null and undefined included. */
  callMany<K extends ThirdPartyHook>(name: K, args: HookArgs<K>): Promise<(HookValue<K> | undefined)[]> {
    return dispatch(this.#run(name, { combine: "all", failsTurn: true }, args));
  }

  /** A third party's hook: every implementation, answers ignored. */
  async callEach<K extends ThirdPartyHook>(name: K, args: HookArgs<K>): Promise<void> {
    await this.#run(name, { combine: "observe", failsTurn: true }, args);
  }

  async #run(name: string, spec: RunSpec, args: unknown): Promise<unknown> {
    const impls = this.#ordered(name, spec);
    if (spec.combine === "chain") {
      const value = await this.#chain(name, impls, 0, args);
      checkAnswer(name, spec, value);
      return value;
    }
    const combination = new Combination(name, spec, args);
    for (const impl of impls) {
      let value: unknown;
      try {
        value = await this.#invoke(impl, combination.args);
      } catch (error) {
        value = combination.failed(error, impl.plugin);
      }
      if (combination.take(value, impl.plugin)) break;
    }
    return combination.result();
  }

  /**
   * The first answer that is not null/undefined; each implementation gets `next(args?)`, which
   * runs the ones below it. Once it has called `next`, its own answer is final, even null; a
   * second call to `next` rejects.
   */
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
      const value = await this.#invoke(impl, args, next);
      const answer = impl.answer ? impl.answer(value) : value;
      if (called || (answer !== null && answer !== undefined)) return answer ?? undefined;
    }
    return undefined;
  }

  /** Calls one implementation; what it throws, or its promise rejects with, comes back as a {@link PluginHookError} naming it. */
  #invoke(impl: StoredImpl, args: unknown, next?: Next): unknown {
    let value: unknown;
    try {
      value = impl.call(args, next);
    } catch (error) {
      throw this.#blame(impl, error);
    }
    return isThenable(value) ? Promise.resolve(value).catch((error: unknown) => Promise.reject(this.#blame(impl, error))) : value;
  }

  #blame(impl: StoredImpl, error: unknown): unknown {
    if (typeof error === "object" && error !== null && this.#passedOn.has(error)) return error;
    return blamesPlugin(impl.plugin, error) ? new PluginHookError(impl.plugin, impl.hook, error) : error;
  }
}
