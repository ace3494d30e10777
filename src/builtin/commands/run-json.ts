/**
 * `bub run --json`: the turn as JSON Lines on stdout, one event object a line, written as the
 * turn streams. The shapes are documented in docs/cli.md:
 *
 * ```
 * {"type":"text","delta":"Hel"}
 * {"type":"reasoning","delta":"..."}
 * {"type":"tool_call","id":"call_0","name":"fs.read","arguments":{"path":"README.md"}}
 * {"type":"tool_result","id":"call_0","name":"fs.read","output":"..."}   (or "error": {...})
 * {"type":"error","kind":"provider","message":"..."}
 * {"type":"final","ok":true,"session_id":"cli:local","text":"...","usage":{"prompt_tokens":12,...}}
 * ```
 *
 * Every line has the known secrets replaced by `[redacted:<setting>]`, as stderr, the log and
 * the tape have them; streamed deltas through a {@link StreamRedactor}, so a secret split
 * over several deltas is caught too.
 */
import type { Envelope } from "../../kernel/envelope.ts";
import { AsyncStreamEvents, type StreamEvent, type Usage } from "../../kernel/stream.ts";
import { isRecord } from "../../kernel/guards.ts";
import { redactJsonText } from "../../config/redaction.ts";
import { StreamRedactor } from "../../config/stream-redaction.ts";

const ERROR_KINDS = new Set(["invalid_input", "config", "provider", "tool", "temporary", "timeout", "not_found", "unknown"]);

/** A failed tool's result as the executor records it: `{kind, message, details?}`. */
function isErrorData(value: unknown): value is { kind: string; message: string } {
  if (typeof value !== "object" || value === null || !("kind" in value) || !("message" in value)) return false;
  const { kind, message } = value;
  return typeof kind === "string" && ERROR_KINDS.has(kind) && typeof message === "string";
}

/** Tool arguments as sent by the model: parsed when they are JSON, else the raw text. */
function parsedArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw ?? {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

interface CallInfo {
  id: string;
  name: string;
}

/** Writes one turn's events as JSON lines; see the module comment. */
export class JsonTurnWriter {
  readonly #out: { write(text: string): unknown };
  /** Calls of the current step, in order: their results come in the same order. */
  #calls: CallInfo[] = [];
  #usage: Record<string, unknown> | null = null;
  #errors = 0;
  /** The text and reasoning deltas, each redacted as one stream. */
  readonly #deltas = { text: new StreamRedactor(), reasoning: new StreamRedactor() };

  constructor(out: { write(text: string): unknown }) {
    this.#out = out;
  }

  #line(event: Record<string, unknown>): void {
    this.#out.write(`${redactJsonText(JSON.stringify(event))}\n`);
  }

  /** Writes what the delta streams held back for a secret that did not come, before any other line. */
  #flushDeltas(except?: "text" | "reasoning"): void {
    for (const kind of ["reasoning", "text"] as const) {
      if (kind === except) continue;
      const rest = this.#deltas[kind].flush();
      if (rest !== "") this.#line({ type: kind, delta: rest });
    }
  }

  /** The stream, passed on unchanged, each event written as it goes by. */
  wrap(stream: AsyncStreamEvents): AsyncStreamEvents {
    const write = (event: StreamEvent) => this.#event(event);
    async function* watched(): AsyncGenerator<StreamEvent> {
      for await (const event of stream) {
        write(event);
        yield event;
      }
    }
    return new AsyncStreamEvents(watched(), stream.state);
  }

  #event(event: StreamEvent): void {
    this.#flushDeltas(event.kind === "text" || event.kind === "reasoning" ? event.kind : undefined);
    switch (event.kind) {
      case "text":
      case "reasoning": {
        const delta = this.#deltas[event.kind].push(String(event.data.delta));
        if (delta !== "") this.#line({ type: event.kind, delta });
        return;
      }
      case "tool_call":
        this.#calls = event.data.tool_calls.map((call, index) => {
          const fn: unknown = call.function;
          const fnName = typeof fn === "object" && fn !== null && "name" in fn ? fn.name : undefined;
          const fnArguments = typeof fn === "object" && fn !== null && "arguments" in fn ? fn.arguments : undefined;
          const info = { id: String(call.id ?? `call_${index}`), name: String(fnName ?? call.name ?? "") };
          this.#line({ type: "tool_call", ...info, arguments: parsedArguments(fnArguments ?? call.arguments) });
          return info;
        });
        return;
      case "tool_result":
        event.data.tool_results.forEach((result, index) => {
          const call = this.#calls[index] ?? { id: `call_${index}`, name: "" };
          this.#line({ type: "tool_result", ...call, ...(isErrorData(result) ? { error: result } : { output: result ?? null }) });
        });
        this.#calls = [];
        return;
      case "usage":
        this.#usage = addUsage(this.#usage, event.data);
        return;
      case "error":
        this.#error(event.data.message, event.data.kind);
        return;
      case "final":
        return;
    }
  }

  #error(message: string, kind?: string): void {
    this.#errors++;
    this.#line({ type: "error", ...(kind ? { kind } : {}), message });
  }

  /**
   * Ends the turn: error outbounds the stream did not already report as `error` lines, then
   * the `final` line. Returns the exit code: 1 when the turn failed, else 0.
   */
  finish(sessionId: string, outbounds: readonly Envelope[]): number {
    this.#flushDeltas();
    const answers: string[] = [];
    let failed = this.#errors > 0;
    for (const outbound of outbounds) {
      const content = outbound.content;
      if (outbound.kind !== "error") {
        if (content !== "") answers.push(content);
        continue;
      }
      failed = true;
      // A model error came through the stream already; a failed command only as an outbound.
      if (this.#errors === 0 && content !== "") this.#error(content);
    }
    this.#line({ type: "final", ok: !failed, session_id: sessionId, text: answers.join("\n\n"), usage: this.#usage });
    return failed ? 1 : 0;
  }
}

/**
 * Two usages added field by field (numbers only; nested counts such as cached tokens too).
 * `total` is what was summed so far under the same key: nothing yet, or (normally) a usage.
 */
function addUsage(total: unknown, usage: Usage | Record<string, unknown>): Record<string, unknown> {
  if (!total) return structuredClone(usage);
  const sum: Record<string, unknown> = Object.assign({}, total);
  for (const [key, value] of Object.entries(usage)) {
    const before = sum[key];
    if (typeof value === "number") sum[key] = (typeof before === "number" ? before : 0) + value;
    else if (isRecord(value)) sum[key] = addUsage(before, value);
    else if (before === undefined) sum[key] = value;
  }
  return sum;
}

