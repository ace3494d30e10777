import { HookRuntime } from "./runtime.ts";
import { turnModelOutput } from "./model-output.ts";
import { createLogger, type LogRoute, type LogSink } from "./log.ts";
import { newCorrelationId, withCorrelation } from "./correlation.ts";
import { isEmptyPrompt, threadIdOf, toEnvelope, type Envelope, type EnvelopeInput, type Prompt } from "./envelope.ts";
import { createTurnContext, createTurnState, type TurnContext } from "./turn-context.ts";
import type { SettingsStore } from "./settings-contract.ts";
import { RunningScopes, enterProvided, type RunningScope } from "./scope.ts";
import type { TapeStore } from "./tape-contract.ts";
import type { AdmitDecision, ModelOptions, SteeringInbox, TurnResult, TurnSnapshot } from "./types.ts";
import type { HookArgs } from "./hooks.ts";
import { instantiatePlugin, type PluginExport, type PluginOrigin, type PluginStatus } from "./plugin-export.ts";

const log = createLogger("bub:framework");
const turnLog = createLogger("bub:turn");


/** Options for {@link BubFramework}; `createBub()` fills them from `BUB_*` settings and config.yml. */
export interface BubFrameworkOptions {
  /** Directory the agent works in. */
  workspace: string;
  /** Bub's home (tapes, history, plugin project, config). */
  home: string;
  /** Environment the plugins read. Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The settings store every plugin reads its settings from. */
  settings: SettingsStore;
  /** Where records logged inside this framework's scopes go; default the process-wide sink (stderr). */
  logSink?: LogSink;
}

/** What {@link BubFramework.processInbound} takes beside the message. */
export interface ProcessInboundOptions {
  /**
   * Cancels the turn: every hook of the turn gets it as `signal` (the builtin agent hands it
   * to the model call and every tool call). Without one the turn cannot be cancelled.
   */
  signal?: AbortSignal;
}

/** Wraps one whole turn (see {@link BubFramework.wrapTurns}): `turn` runs the pipeline. */
export type TurnWrapper = (inbound: Envelope, turn: () => Promise<TurnResult>) => Promise<TurnResult>;

export type { PluginExport, PluginOrigin, PluginStatus } from "./plugin-export.ts";

/**
 * The hook-first kernel: owns the plugins and the turn pipeline. Everything that does real
 * work is a plugin. `createBub()` builds one with the settings, the builtin plugin and the
 * discovered plugins registered.
 *
 * ```ts
 * const framework = await createBub({ workspace: process.cwd() });
 * const result = await framework.processInbound({ channel: "cli", chat_id: "local", content: "hi" });
 * ```
 */
export class BubFramework {
  readonly runtime = new HookRuntime();
  readonly settings: SettingsStore;
  readonly env: NodeJS.ProcessEnv;
  workspace: string;
  readonly home: string;
  readonly #status = new Map<string, PluginStatus>();
  readonly #logs: LogRoute;
  readonly #scopes: RunningScopes;
  readonly #cleanups: (() => unknown)[] = [];
  readonly #turnWrappers: TurnWrapper[] = [];
  #registering: { name: string } | null = null;

  constructor(options: BubFrameworkOptions) {
    this.env = options.env ?? process.env;
    this.workspace = options.workspace;
    this.home = options.home;
    this.settings = options.settings;
    this.#logs = { sink: options.logSink ?? null };
    this.#scopes = new RunningScopes(this.#logs);
  }

  /**
   * Sends what is logged inside this framework's `running()` scopes to `sink` (null: the
   * process-wide sink). Returns a function that restores the previous one. Another
   * framework in the same process keeps its own.
   */
  setLogSink(sink: LogSink | null): () => void {
    const previous = this.#logs.sink;
    this.#logs.sink = sink;
    return () => {
      this.#logs.sink = previous;
    };
  }

  /**
   * Registers a plugin object (or a factory, called with the framework; a class is
   * constructed with `new`) under `name`, else its own `name`, else `fallbackName`. Later
   * registrations run first. `beforeRegister` may refuse the resolved name by throwing.
   * Returns a function that unregisters it.
   */
  async registerPlugin(
    plugin: PluginExport,
    name?: string | null,
    options: { origin?: PluginOrigin; fallbackName?: string; from?: string; beforeRegister?: (name: string) => void } = {},
  ): Promise<() => void> {
    const token = { name: name ?? options.fallbackName ?? `plugin-${this.runtime.plugins.length}` };
    this.#registering = token;
    const instance = await instantiatePlugin(plugin, this).finally(() => (this.#registering = null));
    const pluginName = name ?? instance.name ?? options.fallbackName ?? `plugin-${this.runtime.plugins.length}`;
    token.name = pluginName;
    options.beforeRegister?.(pluginName);
    const unregister = this.runtime.register(instance, pluginName);
    this.#status.set(pluginName, { name: pluginName, ok: true, source: options.origin ?? "manual", ...(options.from ? { from: options.from } : {}) });
    return unregister;
  }

  /**
   * The plugin whose factory is running, while it runs (what it registers, such as tools,
   * can be attributed to it); its `name` is the one it is finally registered under.
   */
  get registeringPlugin(): { readonly name: string } | null {
    return this.#registering;
  }

  /**
   * Records a plugin that could not be loaded or initialised (`bub hooks` lists it) and
   * warns once. A failure never replaces the status of a registered plugin of the same name.
   */
  pluginFailed(name: string, origin: PluginOrigin, error: unknown, stage: "load" | "initialize" = "load", from?: string): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    log.warn(`Failed to ${stage} plugin '${name}'${from ? ` (${from})` : ""}; it is skipped`, failure);
    const key = this.#status.get(name)?.ok ? `${name}\0${this.#status.size}` : name;
    this.#status.set(key, { name, ok: false, source: origin, error: failure, ...(from ? { from } : {}) });
  }

  /** Every plugin's load status, in load order. */
  get pluginStatus(): readonly PluginStatus[] {
    return [...this.#status.values()];
  }

  /**
   * Adds a cleanup that {@link shutdown} runs (connections, child processes a plugin keeps
   * for the process). Returns a function that removes it again.
   */
  onShutdown(cleanup: () => unknown): () => void {
    this.#cleanups.push(cleanup);
    return () => {
      const index = this.#cleanups.indexOf(cleanup);
      if (index >= 0) this.#cleanups.splice(index, 1);
    };
  }

  /**
   * Runs every cleanup added with {@link onShutdown}, the last added first; a failing
   * cleanup is logged and the others still run. The `bub` command line calls it when a
   * command ends; an embedder calls it when it is done with the framework.
   */
  async shutdown(): Promise<void> {
    const cleanups = this.#cleanups.splice(0).reverse();
    for (const cleanup of cleanups) {
      try {
        await cleanup();
      } catch (error) {
        log.warn("framework.shutdown cleanup failed", error);
      }
    }
  }

  /** `{ hook: [plugins in call order] }`. */
  hookReport(): Record<string, string[]> {
    return this.runtime.hookReport();
  }

  // ---- the turn pipeline -------------------------------------------------------------

  /**
   * The session id of an inbound message (the hook's answer, else its own `sessionId`, else
   * `channel:chatId`, each `default` when empty); `signal` is the turn's, when a turn asks.
   */
  async resolveSession(message: Envelope, signal?: AbortSignal): Promise<string> {
    const answer = await this.runtime.call("resolveSession", signal ? { message, signal } : { message });
    if (answer) return String(answer);
    if (message.sessionId !== undefined) return message.sessionId;
    return `${message.channel || "default"}:${message.chatId || "default"}`;
  }

  /**
   * A {@link TurnContext} for a turn of `sessionId` (the framework builds one per turn; the
   * agent builds one for a run nobody started through {@link processInbound}).
   */
  turnContext(init: { turnId: string; sessionId: string; signal: AbortSignal; threadId?: string | null; message?: Envelope | null }): TurnContext {
    return createTurnContext({
      threadId: null,
      ...init,
      workspace: this.workspace,
      settings: this.settings,
      tapes: this.tapeStore,
      log: turnLog,
      steering: this.steeringInbox,
    });
  }

  /**
   * Runs one turn: resolveSession → loadState → buildPrompt → runModel(Stream) →
   * saveState → renderOutbound → dispatchOutbound. `saveState` runs even when the model
   * fails; a failing turn notifies `onError(stage="turn")` and rethrows. A failing
   * `saveState` or `dispatchOutbound` implementation does not stop the others or the turn:
   * it is reported (`onError` with stage `save_state` / `dispatch_outbound`) once the
   * replies are out. `options.signal` cancels the turn: every hook gets it as `signal`.
   * The message is made an {@link Envelope} first ({@link toEnvelope}: an envelope stays
   * the same object).
   */
  processInbound(input: EnvelopeInput | Envelope, options: ProcessInboundOptions = {}): Promise<TurnResult> {
    // Outside any running() scope (a library caller), the turn opens one of its own so its
    // tape is written to the configured store, as inside `bub run`.
    if (this.currentScope === null) return this.running(() => this.processInbound(input, options));
    const envelope = toEnvelope(input);
    // The turn writes the resolved session onto its message: a frozen one is copied first.
    const inbound = Object.isExtensible(envelope) ? envelope : { ...envelope };
    // One id per turn, on `state.turn_id` and on every tape entry the turn writes (issue 19).
    const turnId = newCorrelationId();
    return withCorrelation({ turnId }, () => {
      // A turn nobody can cancel still hands its hooks a signal (one that never aborts).
      const signal = options.signal ?? new AbortController().signal;
      let run = () => this.#processInbound(inbound, signal, turnId);
      for (const wrapper of this.#turnWrappers) {
        const inner = run;
        run = () => wrapper(inbound, inner);
      }
      return run();
    });
  }

  /**
   * Runs every turn {@link processInbound} starts inside `wrapper`, which must call `turn()`
   * once and return (or rethrow) what it gives; the tracing plugin opens the turn's span
   * around it. A wrapper added later runs outside the earlier ones. Returns a function that
   * removes it.
   */
  wrapTurns(wrapper: TurnWrapper): () => void {
    this.#turnWrappers.push(wrapper);
    return () => {
      const index = this.#turnWrappers.indexOf(wrapper);
      if (index >= 0) this.#turnWrappers.splice(index, 1);
    };
  }

  async #processInbound(inbound: Envelope, signal: AbortSignal, turnId: string): Promise<TurnResult> {
    const runtime = this.runtime;
    let context: TurnContext | undefined;
    try {
      const sessionId = await this.resolveSession(inbound, signal);
      inbound.sessionId ??= sessionId;

      context = this.turnContext({ turnId, sessionId, signal, threadId: threadIdOf(inbound), message: inbound });
      const state = createTurnState(context, { turn_id: turnId });
      Object.assign(state, await runtime.call("loadState", { message: inbound, sessionId, context, signal }));

      const built = await runtime.call("buildPrompt", { message: inbound, sessionId, state, context, signal });
      const prompt: Prompt = isEmptyPrompt(built) ? inbound.content : built;

      let modelOutput = "";
      let failure: unknown;
      let saveErrors: unknown[] = [];
      try {
        modelOutput = await turnModelOutput(runtime, inbound, { prompt, sessionId, state, context, signal });
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        const saveArgs: HookArgs<"saveState"> = { sessionId, state, message: inbound, modelOutput, context, signal };
        if (failure !== undefined) saveArgs.error = failure;
        // Every saveState runs; one that fails is reported, after the reply when there is one.
        saveErrors = await runtime.call("saveState", saveArgs);
        if (failure !== undefined) await this.#report("save_state", saveErrors, inbound, context);
      }

      const outbounds = await runtime.call("renderOutbound", { message: inbound, sessionId, state, modelOutput, context, signal });
      const dispatchErrors: unknown[] = [];
      for (const message of outbounds) dispatchErrors.push(...(await runtime.call("dispatchOutbound", { message, context, signal })));
      await this.#report("save_state", saveErrors, inbound, context);
      await this.#report("dispatch_outbound", dispatchErrors, inbound, context);
      return { sessionId, prompt, modelOutput, outbounds, state, context };
    } catch (error) {
      // A cancelled turn (Ctrl-C, SIGINT/SIGTERM, quit) is not an error to report on stderr.
      if (error instanceof Error && error.name === "AbortError") log.info(`turn.cancelled session_id=${inbound.sessionId ?? "?"} turn_id=${turnId}`, error);
      else log.error(`turn.failed session_id=${inbound.sessionId ?? "?"} turn_id=${turnId}`, error);
      await this.notifyError("turn", error, inbound, context);
      throw error;
    }
  }

  /**
   * Reports hook failures that do not fail the turn (a departure from the reference, where
   * they do): logged, then told to every `onError` observer at `stage`.
   */
  async #report(stage: "save_state" | "dispatch_outbound", errors: readonly unknown[], inbound: Envelope, context: TurnContext): Promise<void> {
    for (const error of errors) {
      log.error(`turn.${stage}_failed session_id=${inbound.sessionId ?? "?"}`, error);
      await this.notifyError(stage, error, inbound, context);
    }
  }


  // ---- running() scope ----------------------------------------------------------------

  /**
   * Runs `body` inside a scope where the tape store and steering inbox are resolved once
   * (through `provideTapeStore` / `provideSteeringInbox`) and cleaned up afterwards.
   */
  async running<T>(body: (scope: RunningScope) => Promise<T>): Promise<T> {
    const store = await enterProvided(this.runtime.callSync("provideTapeStore", {}));
    let inbox: Awaited<ReturnType<typeof enterProvided<SteeringInbox>>>;
    try {
      inbox = await enterProvided(this.runtime.callSync("provideSteeringInbox", {}));
    } catch (error) {
      await store.exit(error);
      throw error;
    }
    return this.#scopes.run(store, inbox, body);
  }

  /** The scope the caller runs in (or the most recent open one). */
  get currentScope(): RunningScope | null {
    return this.#scopes.current;
  }

  /** The tape store of the current `running()` scope, or null outside one. */
  get tapeStore(): TapeStore | null {
    return this.currentScope?.tapeStore ?? null;
  }

  /** The steering inbox of the current `running()` scope, or null outside one. */
  get steeringInbox(): SteeringInbox | null {
    return this.currentScope?.steeringInbox ?? null;
  }

  // ---- helpers for channels and the agent ----------------------------------------------

  /** The admission decision for a message (null: default concurrent scheduling). */
  async admitMessage(sessionId: string, message: Envelope, turn: TurnSnapshot): Promise<AdmitDecision | null> {
    return (await this.runtime.call("admitMessage", { sessionId, message, turn })) ?? null;
  }

  /**
   * The models offered for a session (`provideModelOptions`): every plugin's list
   * concatenated, the highest-priority plugin's first, and the first current model named.
   * `,model`, `bub models` and ACP's model option show it.
   */
  modelOptions(sessionId: string, workspace: string = this.workspace): Promise<ModelOptions> {
    return this.runtime.call("provideModelOptions", { sessionId, workspace });
  }

  /** Tells every `onError` observer of a failure at `stage`. */
  notifyError(stage: string, error: unknown, message: Envelope | null = null, context?: TurnContext): Promise<void> {
    return this.runtime.call("onError", context ? { stage, error, message, context } : { stage, error, message });
  }
}

