import { currentScope, runInScope } from "./async-scope.ts";
import type { Provided } from "./hooks.ts";
import type { SteeringInbox } from "./types.ts";
import type { TapeStore } from "./tape-contract.ts";
import type { LogRoute } from "./log.ts";

/** What a `running()` scope holds: the tape store and steering inbox, resolved once. */
export interface RunningScope {
  readonly tapeStore: TapeStore | null;
  readonly steeringInbox: SteeringInbox | null;
}

type Exit = (error: unknown) => Promise<void>;

/** A provider's answer is a generator (sync or async) when it has `next` and `throw` methods. */
function isIterator<T>(value: Provided<T>): value is Generator<T, void, unknown> | AsyncGenerator<T, void, unknown> {
  return typeof value === "object" && value !== null && "next" in value && typeof value.next === "function" && "throw" in value && typeof value.throw === "function";
}

function isAsyncDisposable(value: unknown): value is AsyncDisposable {
  return typeof value === "object" && value !== null && Symbol.asyncDispose in value && typeof value[Symbol.asyncDispose] === "function";
}

function isDisposable(value: unknown): value is Disposable {
  return typeof value === "object" && value !== null && Symbol.dispose in value && typeof value[Symbol.dispose] === "function";
}

/** Enters a provider hook's answer: generators yield their value and clean up at exit; disposables are disposed. */
export async function enterProvided<T>(provided: Provided<T> | null | undefined): Promise<{ value: T | null; exit: Exit }> {
  if (provided === null || provided === undefined) return { value: null, exit: async () => {} };
  if (isIterator(provided)) {
    const generator = provided;
    const first = await generator.next();
    const exit: Exit = async (error) => {
      if (error === undefined) await generator.next();
      else {
        try {
          await generator.throw(error);
        } catch (thrown) {
          if (thrown !== error) throw thrown;
        }
      }
    };
    return { value: first.done ? null : first.value, exit };
  }
  const value = provided;
  if (isAsyncDisposable(value)) return { value, exit: async () => value[Symbol.asyncDispose]() };
  if (isDisposable(value)) return { value, exit: async () => value[Symbol.dispose]() };
  return { value, exit: async () => {} };
}

/**
 * The open `running()` scopes of one framework: the caller's own scope when it runs inside
 * one, else the most recently opened scope that is still open.
 */
export class RunningScopes {
  readonly #logs: LogRoute;

  /** `logs`: where records logged inside a scope go (the framework's own log route). */
  constructor(logs: LogRoute) {
    this.#logs = logs;
  }

  #last: RunningScope | null = null;
  #open = 0;

  /** Runs `body` in a scope whose tape store and inbox were entered by the caller; exits them afterwards. */
  async run<T>(store: { value: TapeStore | null; exit: Exit }, inbox: { value: SteeringInbox | null; exit: Exit }, body: (scope: RunningScope) => Promise<T>): Promise<T> {
    const scope: RunningScope = { tapeStore: store.value, steeringInbox: inbox.value };
    const previous = this.#last;
    this.#last = scope;
    this.#open++;
    let failure: unknown;
    try {
      return await runInScope({ ...currentScope(), logRoute: this.#logs, running: { owner: this, value: scope } }, () => body(scope));
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      this.#open--;
      if (this.#last === scope) this.#last = previous;
      try {
        await inbox.exit(failure);
      } finally {
        await store.exit(failure);
      }
    }
  }

  /** The scope the caller runs in (or the most recent open one); null when none is open. */
  get current(): RunningScope | null {
    if (this.#open === 0) return null;
    const { running } = currentScope();
    return running?.owner === this ? running.value : this.#last;
  }
}
