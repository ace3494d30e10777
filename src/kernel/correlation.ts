/**
 * Correlation ids: which turn, model call and tool call a piece of work belongs to, so tape
 * entries, log lines and traces written for it can be joined (issue 19). The ids live in the
 * kernel's async scope (async-scope.ts): everything a turn starts (hooks, model steps, tools, the entries they write)
 * sees the ids of the turn it belongs to without passing them along by hand.
 */
import { randomFill, randomFillSync } from "node:crypto";
import { currentScope, runInScope, scopeIdentity, scopeRunner, type AsyncScope } from "./async-scope.ts";

/** The ids of the work in progress; each is present once the matching scope is entered. */
export interface Correlation {
  /** One per turn: set when the turn starts (`state.turn_id`). */
  readonly turnId?: string;
  /** One per model call (one agent step: the request with its retries and fallbacks). */
  readonly modelCallId?: string;
  /** One per tool call: the id the model gave the call (`call_…`). */
  readonly toolCallId?: string;
}

/** The tape `meta` form of a {@link Correlation}: `turn_id`, `model_call_id`, `tool_call_id`. */
export type CorrelationMeta = Readonly<Partial<Record<"turn_id" | "model_call_id" | "tool_call_id", string>>>;

/** `outer` with `ids` laid over its correlation (see {@link nested}). */
function scopeWith(ids: Correlation, outer: AsyncScope): AsyncScope {
  const merged = nested(ids, outer.ids);
  const meta: Record<string, string> = {};
  if (merged.turnId) meta.turn_id = merged.turnId;
  if (merged.modelCallId) meta.model_call_id = merged.modelCallId;
  if (merged.toolCallId) meta.tool_call_id = merged.toolCallId;
  return { ...outer, ids: merged, meta };
}

/**
 * The current scope's ids with `ids` laid over them: an empty or missing value keeps the
 * outer one, except that another turn starts afresh (a turn started inside a tool call does
 * not take that call's ids).
 */
function nested(ids: Correlation, outer: Correlation): Correlation {
  const merged = !(outer.turnId || outer.modelCallId || outer.toolCallId) || (ids.turnId && ids.turnId !== outer.turnId) ? ids : { turnId: ids.turnId || outer.turnId, modelCallId: ids.modelCallId || outer.modelCallId, toolCallId: ids.toolCallId || outer.toolCallId };
  const found: { -readonly [K in keyof Correlation]: Correlation[K] } = {};
  if (merged.turnId) found.turnId = merged.turnId;
  if (merged.modelCallId) found.modelCallId = merged.modelCallId;
  if (merged.toolCallId) found.toolCallId = merged.toolCallId;
  return found;
}

/** True when laying `ids` over `outer` changes nothing (the consumer already runs in that correlation). */
function alreadyIn(ids: Correlation, outer: AsyncScope): boolean {
  const merged = nested(ids, outer.ids);
  return merged.turnId === outer.ids.turnId && merged.modelCallId === outer.ids.modelCallId && merged.toolCallId === outer.ids.toolCallId;
}

/** Runs `body` as it is: the scope a stream needs is the one its consumer is in already. */
function direct<R>(body: () => R): R {
  return body();
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * Random bytes for ids, taken from a pool that is refilled off the event loop: a turn makes
 * several ids, and filling 16 bytes at a time is a synchronous call into the crypto library
 * each time. The pool in use is filled synchronously only the first time and should the
 * spare one not be ready when it runs out.
 */
const POOL_BYTES = 4096;
let pool: Buffer | null = null;
let used = 0;
let spare: Buffer | null = null;
let filling = false;

/** Fills `target` from `offset` on with random bytes from the pool. */
function randomBytesInto(target: Uint8Array, offset: number): void {
  const wanted = target.length - offset;
  if (pool === null || used + wanted > pool.length) {
    pool = spare ?? randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    spare = null;
    used = 0;
  }
  if (spare === null && !filling) {
    filling = true;
    randomFill(Buffer.allocUnsafe(POOL_BYTES), (error, filled) => {
      filling = false;
      if (!error) spare = filled;
    });
  }
  target.set(pool.subarray(used, used + wanted), offset);
  used += wanted;
}

/**
 * A new id: a UUID version 7 (48 bits of Unix milliseconds, then random bits), so ids sort
 * by the time they were made and fit anywhere a UUID does.
 *
 * ```ts
 * newCorrelationId(); // "019abf3e-5c1a-7d2e-9f40-3b8c1e0a7d55"
 * ```
 */
export function newCorrelationId(): string {
  const bytes = new Uint8Array(16);
  randomBytesInto(bytes, 6);
  let ms = Date.now();
  for (let index = 5; index >= 0; index--) {
    bytes[index] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  let text = "";
  for (let index = 0; index < 16; index++) {
    if (index === 4 || index === 6 || index === 8 || index === 10) text += "-";
    text += HEX[bytes[index]];
  }
  return text;
}

/**
 * Runs `body` with `ids` added to the current correlation (ids of an outer scope that
 * `ids` does not name stay, unless `ids` names another turn). Everything `body` starts,
 * awaited or not, sees them.
 *
 * ```ts
 * await withCorrelation({ toolCallId: call.id }, () => runTool(call));
 * ```
 */
export function withCorrelation<T>(ids: Correlation, body: () => T): T {
  return runInScope(scopeWith(ids, currentScope()), body);
}

/**
 * A stream whose producer runs with `ids` laid over the correlation of whoever pulls each
 * item (see {@link withCorrelation}). An async generator runs its body in the caller's
 * scope on every `next()`, so a scope entered around the call that creates the generator
 * would be lost; this enters it around every pull. It is a plain iterator, not a generator:
 * each pull hands on the producer's own promise, so a delta crossing it costs no extra
 * promise or microtask (a turn streams hundreds).
 *
 * ```ts
 * return new AsyncStreamEvents(correlated({ turnId }, body), state);
 * ```
 */
export function correlated<T>(ids: Correlation, source: AsyncIterable<T>): AsyncIterableIterator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  // The scope, and the runner that enters it, are made once per caller scope, not once per
  // item, and none when the caller's scope has these ids already (a turn's stream pulled
  // inside that turn's `processInbound`). The runner also restores the rest of the async
  // context (the tracing context) as the pull that made it saw it: a consumer pulls from
  // one loop.
  let outer: AsyncScope | undefined;
  let inner: (<R>(body: () => R) => R) | undefined;
  const enter = <R>(body: () => R): R => {
    const current = scopeIdentity();
    if (inner === undefined || current !== outer) {
      outer = current;
      const scope = currentScope();
      inner = alreadyIn(ids, scope) ? direct : scopeRunner(scopeWith(ids, scope));
    }
    return inner(body);
  };
  const pull = () => iterator.next();
  const finished: IteratorReturnResult<void> = { done: true, value: undefined };
  const stream: AsyncIterableIterator<T, void, undefined> = {
    next: () => enter(pull),
    // A consumer that stops early closes the producer inside the scope too.
    return: () => enter(async () => (await iterator.return?.()) ?? finished),
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}

/** The ids of the current scope, or undefined outside any. */
export function currentCorrelation(): Correlation | undefined {
  const { ids } = currentScope();
  return ids.turnId || ids.modelCallId || ids.toolCallId ? ids : undefined;
}

/** The current ids as tape `meta` keys (`turn_id`, ...), or undefined outside any scope. */
export function currentCorrelationMeta(): CorrelationMeta | undefined {
  return currentCorrelation() ? currentScope().meta : undefined;
}
