/**
 * The tracing plugin: OpenTelemetry spans for turns, model calls and tool calls
 * (docs/observability.md). The builtin composition registers it only when the environment
 * configures tracing (see ./settings.ts); the OpenTelemetry SDK itself is imported on the
 * framework's first turn, so commands that run no turn never load it.
 *
 * The turn span wraps the whole pipeline (`framework.wrapTurns`), from resolving the
 * session to delivering the replies. Model and tool calls find it through the turn state,
 * where `loadState` leaves it under a private symbol; hooks without the state find it in
 * the turn's async context.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createLogger } from "../kernel/log.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { TracingSettings } from "./settings.ts";
import type { TracerHandle } from "./tracer.ts";
import type { TurnTrace } from "./turn-trace.ts";
import { isThenable } from "../kernel/guards.ts";

/** Options of {@link createTracingPlugin}. */
export interface TracingPluginOptions {
  /** Replaces the OTLP exporter (tests and benchmarks). */
  readonly exporter?: SpanExporter;
  /** Called with the tracer handle once it is created (tests and benchmarks flush through it). */
  readonly onTracer?: (handle: TracerHandle) => void;
}

const log = createLogger("bub:tracing");

/** The name the plugin is registered under; its own hooks get no hook spans. */
export const PLUGIN_NAME = "tracing";

/** Where `loadState` leaves the turn's trace on the turn state. */

interface Loaded {
  readonly handle: TracerHandle;
  readonly TurnTrace: typeof TurnTrace;
}

function isObject(value: unknown): value is object {
  return (typeof value === "object" && value !== null) || typeof value === "function";
}

/** The package version, for `service.version` (package.json two folders up, in src/ and dist/ alike). */
async function packageVersion(): Promise<string | undefined> {
  try {
    const { readFile } = await import("node:fs/promises");
    const parsed: unknown = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
    return isObject(parsed) && "version" in parsed && typeof parsed.version === "string" ? parsed.version : undefined;
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
    const current = new AsyncLocalStorage<TurnTrace>();
    /** Each turn's trace by its context: the hooks of a turn find it there, whichever async context they run in. */
    const traces = new WeakMap<TurnContext, TurnTrace>();
    const turnOf = (context: TurnContext): TurnTrace | null => {
      const turn = traces.get(context) ?? current.getStore();
      return turn && !turn.ended ? turn : null;
    };

    const unwrapTurns = framework.wrapTurns(async (inbound, run) => {
      const { handle, TurnTrace } = await load();
      const turn = new TurnTrace(handle.tracer, { channel: inbound.channel || null, chatId: inbound.chatId || null, sessionId: inbound.sessionId || null }, settings.captureContent);
      try {
        const result = await current.run(turn, run);
        turn.context ??= result.context;
        turn.end();
        return result;
      } catch (error) {
        turn.end(error);
        throw error;
      }
    });
    const unwrapCalls = settings.traceHooks ? framework.runtime.wrapCalls((hook, plugin, call) => traceHookCall(current.getStore(), hook, plugin, call)) : () => {};
    framework.onShutdown(async () => {
      unwrapTurns();
      unwrapCalls();
      if (!loading) return;
      try {
        await (await loading).handle.shutdown();
      } catch (error) {
        // A collector that is down must not make every command end with a warning; the log file says so.
        log.info(`tracing.export_failed url=${settings.url} error=${error instanceof Error ? error.message : String(error)}`);
      }
    });

    return {
      name: PLUGIN_NAME,

      loadState({ sessionId, context }) {
        const turn = current.getStore();
        if (!turn) return undefined;
        turn.setSession(sessionId);
        turn.context = context;
        traces.set(context, turn);
        return undefined;
      },

      saveState({ context, error }) {
        const turn = turnOf(context);
        if (!turn) return;
        turn.context = context;
        if (error !== undefined) turn.fail(error);
      },

      onError({ error }) {
        // A model error the stream reported, a failed reply; the turn's own failure ends it in the wrapper.
        current.getStore()?.fail(error);
      },

      beforeLlmCall({ request, context }) {
        turnOf(context)?.startChat(request);
        return undefined;
      },

      afterLlmCall({ request, result, context }) {
        turnOf(context)?.endChat(request, result);
      },

      beforeToolCall({ call, context }) {
        turnOf(context)?.startTool(call);
        return undefined;
      },

      afterToolCall({ call, result, context }) {
        turnOf(context)?.endTool(call, result);
      },
    };
  };
}

/**
 * One hook implementation's call inside a `hook {name}` span when a turn is running (other
 * calls, and this plugin's own, run as they are); a synchronous hook stays synchronous.
 */
function traceHookCall(turn: TurnTrace | undefined, hook: string, plugin: string, call: () => unknown): unknown {
  if (!turn || turn.ended || plugin === PLUGIN_NAME) return call();
  const span = turn.startHook(hook, plugin);
  let value: unknown;
  try {
    value = call();
  } catch (error) {
    turn.endHook(span, error);
    throw error;
  }
  if (!isThenable(value)) {
    turn.endHook(span);
    return value;
  }
  return Promise.resolve(value).then(
    (settled) => {
      turn.endHook(span);
      return settled;
    },
    (error: unknown) => {
      turn.endHook(span, error);
      throw error;
    },
  );
}
