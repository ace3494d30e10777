/**
 * The tracing plugin: OpenTelemetry spans for turns, model calls and tool calls
 * (docs/observability.md). The builtin composition registers it only when the environment
 * configures tracing (see ./settings.ts); the OpenTelemetry SDK itself is imported on the
 * framework's first turn, so commands that run no turn never load it.
 *
 * The turn span starts when the turn's state is loaded and ends when its answer is
 * rendered (or when the turn fails); model and tool calls find it through the turn state,
 * where `loadState` leaves it under a private symbol.
 */
import { fieldOf, type Envelope } from "../kernel/envelope.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import type { TurnState } from "../kernel/types.ts";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { TracingSettings } from "./settings.ts";
import type { TracerHandle } from "./tracer.ts";
import type { TurnTrace } from "./turn-trace.ts";

/** Options of {@link createTracingPlugin}. */
export interface TracingPluginOptions {
  /** Replaces the OTLP exporter (tests and benchmarks). */
  readonly exporter?: SpanExporter;
  /** Called with the tracer handle once it is created (tests and benchmarks flush through it). */
  readonly onTracer?: (handle: TracerHandle) => void;
}

/** Where `loadState` leaves the turn's trace on the turn state. */
const TURN = Symbol("bub.tracing.turn");

interface Loaded {
  readonly handle: TracerHandle;
  readonly TurnTrace: typeof TurnTrace;
}

function text(value: unknown): string | null {
  return value === undefined || value === null || value === "" ? null : String(value);
}

function isObject(value: unknown): value is object {
  return (typeof value === "object" && value !== null) || typeof value === "function";
}

/** The package version, for `service.version` (package.json two folders up, in src/ and dist/ alike). */
async function packageVersion(): Promise<string | undefined> {
  try {
    const { readFile } = await import("node:fs/promises");
    return (JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * A plugin factory tracing every turn of the framework it is registered on. The tracer
 * provider belongs to that framework and is flushed and closed by `framework.shutdown()`.
 *
 * ```ts
 * const settings = tracingSettings(process.env);
 * if (settings) await framework.registerPlugin(createTracingPlugin(settings), "tracing");
 * ```
 */
export function createTracingPlugin(settings: TracingSettings, options: TracingPluginOptions = {}): (framework: BubFramework) => BubPlugin {
  return (framework) => {
    let loading: Promise<Loaded> | null = null;
    const load = (): Promise<Loaded> =>
      (loading ??= (async () => {
        const [{ createTracer }, { TurnTrace }, version] = await Promise.all([import("./tracer.ts"), import("./turn-trace.ts"), packageVersion()]);
        const handle = await createTracer(settings, { ...(version ? { version } : {}), ...(options.exporter ? { exporter: options.exporter } : {}) });
        options.onTracer?.(handle);
        return { handle, TurnTrace };
      })());
    framework.onShutdown(async () => {
      if (loading) await (await loading).handle.shutdown();
    });

    /** Turns by their inbound message, for the hooks that only see the message. */
    const byMessage = new WeakMap<object, TurnTrace>();
    const turnOf = (state: TurnState): TurnTrace | null => {
      const turn = (state as Record<symbol, unknown>)[TURN];
      return turn && !(turn as TurnTrace).ended ? (turn as TurnTrace) : null;
    };
    const startTurn = async (message: Envelope, sessionId: string | null): Promise<TurnTrace> => {
      const { handle, TurnTrace } = await load();
      const turn = new TurnTrace(handle.tracer, { channel: text(fieldOf(message, "channel")), chatId: text(fieldOf(message, "chat_id")), sessionId }, settings.captureContent);
      if (isObject(message)) byMessage.set(message, turn);
      return turn;
    };

    return {
      name: "tracing",

      async loadState({ message, sessionId }) {
        const known = isObject(message) ? byMessage.get(message) : undefined;
        const turn = known && !known.ended ? known : await startTurn(message, sessionId);
        turn.setSession(sessionId);
        return { [TURN]: turn } as Record<string, unknown>;
      },

      saveState({ state, error }) {
        const turn = turnOf(state);
        if (!turn) return;
        turn.state = state;
        if (error !== undefined) turn.fail(error);
      },

      renderOutbound({ state }) {
        const turn = turnOf(state);
        if (turn) {
          turn.state = state;
          turn.end();
        }
        return undefined;
      },

      async onError({ stage, error, message }) {
        const known = isObject(message) ? byMessage.get(message) : undefined;
        if (known?.ended) return;
        if (stage !== "turn") {
          known?.fail(error);
          return;
        }
        // A turn that failed before its state was loaded still gets its (failed) span.
        const turn = known ?? (await startTurn(message, text(fieldOf(message, "session_id"))));
        turn.end(error);
      },

      beforeLlmCall({ request, state }) {
        turnOf(state)?.startChat(request);
        return undefined;
      },

      afterLlmCall({ request, result, state }) {
        turnOf(state)?.endChat(request, result);
      },

      beforeToolCall({ call, state }) {
        turnOf(state)?.startTool(call);
        return undefined;
      },

      afterToolCall({ call, result, state }) {
        turnOf(state)?.endTool(call, result);
      },
    };
  };
}
