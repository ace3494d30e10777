import { BubError } from "./errors.ts";

/** Token usage as reported by a provider (OpenAI field names). */
export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  [key: string]: unknown;
}

/** One event of a streamed turn. `kind` selects the shape of `data`. */
export type StreamEvent =
  | { kind: "text"; data: { delta: string } }
  | { kind: "reasoning"; data: { delta: string } }
  | { kind: "tool_call"; data: { tool_calls: Record<string, unknown>[] } }
  | { kind: "tool_result"; data: { tool_results: unknown[] } }
  | { kind: "usage"; data: Usage }
  | { kind: "error"; data: { kind?: string; message: string; details?: Record<string, unknown> } }
  | {
      kind: "final";
      data: { ok: boolean; text?: string; tool_calls?: Record<string, unknown>[]; tool_results?: unknown[] };
    };

/** The kinds of {@link StreamEvent}. */
export type StreamEventKind = StreamEvent["kind"];

/** Mutable state carried alongside a stream: the error and usage known when it ends. */
export interface StreamState {
  error: BubError | null;
  usage: Usage | null;
  /** Extra values a producer wants consumers to see (the agent keeps `context` here). */
  [key: string]: unknown;
}

/** A fresh {@link StreamState}. */
export function createStreamState(init: Partial<StreamState> = {}): StreamState {
  return { error: null, usage: null, ...init };
}

/**
 * An async iterable of {@link StreamEvent}s plus the {@link StreamState} the producer
 * fills while it runs. Single pass: iterating twice yields the rest of the same stream.
 *
 * ```ts
 * const stream = new AsyncStreamEvents(gen());
 * for await (const event of stream) if (event.kind === "text") process.stdout.write(event.data.delta);
 * stream.error; // BubError | null
 * ```
 */
export class AsyncStreamEvents implements AsyncIterable<StreamEvent> {
  readonly state: StreamState;
  readonly #iterator: AsyncIterator<StreamEvent>;

  constructor(source: AsyncIterable<StreamEvent>, state: StreamState = createStreamState()) {
    this.#iterator = source[Symbol.asyncIterator]();
    this.state = state;
  }

  get error(): BubError | null {
    return this.state.error;
  }

  get usage(): Usage | null {
    return this.state.usage;
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    return this.#iterator;
  }

  /** True for an AsyncStreamEvents, even one from another copy of this package. */
  static isInstance(value: unknown): value is AsyncStreamEvents {
    return (
      value instanceof AsyncStreamEvents ||
      (typeof value === "object" &&
        value !== null &&
        Symbol.asyncIterator in value &&
        typeof value[Symbol.asyncIterator] === "function" &&
        "state" in value &&
        typeof value.state === "object")
    );
  }

  /**
   * A stream of the given events, for tests and simple producers (every `runModel` answer is
   * one: a plain iterator, which costs a turn fewer microtasks than an async generator).
   */
  static of(events: Iterable<StreamEvent>, state?: StreamState): AsyncStreamEvents {
    const iterator = events[Symbol.iterator]();
    return new AsyncStreamEvents({ [Symbol.asyncIterator]: () => ({ next: async () => iterator.next() }) }, state);
  }
}

/** Joins the `text` deltas of a stream into one string; other events are ignored. */
export async function collectText(stream: AsyncIterable<StreamEvent>): Promise<string> {
  let text = "";
  for await (const event of stream) {
    if (event.kind === "text") text += String(event.data.delta);
  }
  return text;
}
