/**
 * The kernel's one async scope: what everything a piece of work starts (hooks, model steps,
 * tools, the entries and log records they write) sees without it being passed along. It
 * holds only what no hook argument carries: where log records go, the framework's open
 * `running()` scope, and the correlation ids of the work in progress.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Correlation, CorrelationMeta } from "./correlation.ts";
import type { LogRoute } from "./log.ts";
import type { RunningScope } from "./scope.ts";

/** See the module comment. Each field is set by the scope that owns it and kept by nested ones. */
export interface AsyncScope {
  /** Where records logged in the scope go (a framework's route); null: the process-wide sink. */
  readonly logRoute: LogRoute | null;
  /** The innermost open `running()` scope and the framework (its scopes) that opened it. */
  readonly running: { readonly owner: object; readonly value: RunningScope } | null;
  /** The correlation ids of the work in progress. */
  readonly ids: Correlation;
  /** `ids` as tape `meta` keys. */
  readonly meta: CorrelationMeta;
}

const EMPTY: AsyncScope = { logRoute: null, running: null, ids: {}, meta: {} };
const storage = new AsyncLocalStorage<AsyncScope>();

/** The current scope (an empty one outside any). */
export function currentScope(): AsyncScope {
  return storage.getStore() ?? EMPTY;
}

/** Runs `body` in `scope` (usually the current one with a field replaced). */
export function runInScope<T>(scope: AsyncScope, body: () => T): T {
  return storage.run(scope, body);
}

/**
 * A function that runs its argument in `scope`, made once: each call switches to the scope
 * without making a new one (`runInScope` makes one per call), for work entered many times, such
 * as every pull of a stream.
 */
export function scopeRunner(scope: AsyncScope): <T>(body: () => T) => T {
  return storage.run(scope, () => AsyncLocalStorage.snapshot());
}

/** The current scope object itself, undefined outside any (to tell scopes apart cheaply). */
export function scopeIdentity(): AsyncScope | undefined {
  return storage.getStore();
}
