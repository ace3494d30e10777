/**
 * The channel manager: starts the enabled channels, turns what they receive into turns
 * (debounce, admission, scheduling), routes outbound messages and streams back to the
 * right channel, and shuts everything down gracefully.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createLogger } from "../kernel/log.ts";
import { fieldOf, type Envelope } from "../kernel/envelope.ts";
import { AsyncStreamEvents } from "../kernel/stream.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { AdmitDecision, Channel, ChannelRouter, MessageHandler, TurnResult, TurnSnapshot, TurnState } from "../kernel/types.ts";
import { BufferedMessageHandler, systemClock, type DebounceClock, type DebounceWindows } from "./debounce.ts";
import { ChannelMessage } from "./message.ts";

const log = createLogger("bub:channels");

/** Options for {@link ChannelManager}. */
export interface ChannelManagerOptions {
  /**
   * Which channels to run: names, `all` (every enabled channel that is not an interface),
   * and `!name` to exclude one. Defaults to the `BUB_ENABLED_CHANNELS` setting (`all`).
   */
  enabledChannels?: readonly string[] | null;
  /**
   * Channels to use in addition to the plugins' (`provideChannels`); one with the same name
   * as a plugin's replaces it. A function receives the manager's message handler.
   */
  channels?: Iterable<Channel> | ((messageHandler: MessageHandler) => Iterable<Channel>);
  /** Seconds running turns get to finish at shutdown before they are cancelled (default 30). */
  graceSeconds?: number;
  /** Run turns with streaming model output. Defaults to the `BUB_STREAM_OUTPUT` setting. */
  streamOutput?: boolean;
  /** Debounce windows. Default to the `BUB_DEBOUNCE_SECONDS` / `BUB_MAX_WAIT_SECONDS` / `BUB_ACTIVE_TIME_WINDOW` settings. */
  debounce?: Partial<DebounceWindows>;
  /** Clock for debounce timers (tests). */
  clock?: DebounceClock;
}

/** One running turn. */
interface TurnTask {
  readonly message: Envelope;
  readonly controller: AbortController;
  done: Promise<void>;
  cancelled: boolean;
  /** Stops waiting for the turn (set while it runs; called on cancellation). */
  stop: () => void;
}

/** A session's turns: the ones running and the admitted messages waiting for them. */
interface SessionTurns {
  readonly sessionId: string;
  readonly active: Set<TurnTask>;
  readonly pending: Envelope[];
}

const turnScope = new AsyncLocalStorage<TurnTask>();

/**
 * The abort signal of the turn the caller runs in (under a {@link ChannelManager}), or null.
 * It aborts when the turn is cancelled by `quit(session)` or at the end of a shutdown's grace
 * period; long-running work (model calls, tools) should stop when it does.
 */
export function currentTurnSignal(): AbortSignal | null {
  return turnScope.getStore()?.controller.signal ?? null;
}

function settingNumber(framework: BubFramework, key: string, fallback: number): number {
  const value = framework.settings.getValue(key, fallback);
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function threadIdOf(message: Envelope): string | null {
  const context = fieldOf(message, "context");
  if (typeof context !== "object" || context === null) return null;
  const thread = (context as Record<string, unknown>).thread_id;
  return thread === undefined || thread === null || thread === "" ? null : String(thread);
}

function setSessionId(message: Envelope, sessionId: string): void {
  if (typeof message !== "object" || message === null || Object.isFrozen(message)) return;
  if (message instanceof ChannelMessage) message.sessionId = sessionId;
  else (message as Record<string, unknown>).session_id = sessionId;
}

/**
 * Runs channels and schedules their messages as turns. It is the framework's
 * {@link ChannelRouter} while it runs.
 *
 * Each received message goes through (in arrival order): debounce (channels with
 * `needsDebounce`), `resolveSession`, then admission — the `admitMessage` hook decides
 * `process` (run now, alongside any running turn of the session), `drop`, `follow_up`
 * (run after the session's running turn, first in first out) or `steer` (hand it to the
 * running turn through the steering inbox; when nothing can take it, it becomes a
 * follow-up). No answer means `process`. Steering messages the turn did not consume move
 * to the front of the session's pending queue when it ends, so nothing admitted is lost.
 *
 * Running the chat REPL over it:
 *
 * ```ts
 * const stop = new AbortController();
 * const manager = new ChannelManager(framework, {
 *   enabledChannels: ["cli"],
 *   channels: (handler) => [new CliChannel({ messageHandler: handler, onExit: () => stop.abort() })],
 *   streamOutput: true,
 * });
 * await manager.run(stop.signal); // returns after the graceful shutdown
 * ```
 *
 * A gateway: `await new ChannelManager(framework, { enabledChannels: ["telegram"] }).run(signal)`.
 */
export class ChannelManager implements ChannelRouter {
  readonly framework: BubFramework;
  /** Every known channel by name (plugins' and the given ones). */
  readonly channels: Map<string, Channel>;
  /**
   * The manager's {@link MessageHandler}: channels hand it what they receive. The promise
   * resolves once the message has been admitted (its turn started, queued, steered or
   * dropped) — never waiting for the turn itself; debounced messages resolve when buffered.
   * Messages received before {@link run} wait for it.
   */
  readonly handleMessage: MessageHandler;
  readonly #options: ChannelManagerOptions;
  readonly #debouncers = new Map<string, BufferedMessageHandler>();
  readonly #sessions = new Map<string, SessionTurns>();
  readonly #inbound: { message: Envelope; admitted: () => void }[] = [];
  #pumping: Promise<void> | null = null;
  #started = false;
  #accepting = true;
  #stopController = new AbortController();
  #idleWaiters: (() => void)[] = [];
  #running: Promise<void> | null = null;
  #startedChannels: Channel[] = [];
  #ready = Promise.withResolvers<void>();

  constructor(framework: BubFramework, options: ChannelManagerOptions = {}) {
    this.framework = framework;
    this.#options = options;
    this.handleMessage = (message) => this.#receive(message);
    this.channels = framework.getChannels(this.handleMessage);
    const given = typeof options.channels === "function" ? options.channels(this.handleMessage) : options.channels;
    for (const channel of given ?? []) this.channels.set(channel.name, channel);
  }

  /** The channels this manager runs, in precedence order (see {@link ChannelManagerOptions.enabledChannels}). */
  enabledChannels(): Channel[] {
    const configured = this.#options.enabledChannels ?? String(this.framework.settings.getValue("enabled_channels", "all")).split(",");
    const names = configured.map((name) => name.trim()).filter((name) => name !== "");
    const excluded = new Set(names.filter((name) => name.startsWith("!")).map((name) => name.slice(1).trim()));
    const included = new Set(names.filter((name) => !name.startsWith("!")));
    const usable = [...this.channels.values()].filter((channel) => channel.enabled !== false && !excluded.has(channel.name));
    if (included.has("all")) return usable.filter((channel) => channel.kind !== "interface");
    const chosen = usable.filter((channel) => included.has(channel.name));
    if (!chosen.some((channel) => channel.kind !== "lifecycle")) return chosen;
    return [...chosen, ...usable.filter((channel) => channel.kind === "lifecycle" && !included.has(channel.name))];
  }

  // ---- receiving ----------------------------------------------------------------------

  /** Resolves once the message is admitted (started, queued, steered or dropped) or buffered by debounce. */
  #receive(message: Envelope): Promise<void> {
    const channelName = String(fieldOf(message, "channel") ?? "");
    const channel = this.channels.get(channelName);
    if (!channel) {
      log.warn(`channel.manager received a message for unknown channel '${channelName}'; ignored`);
      return Promise.resolve();
    }
    if (!this.#accepting) {
      log.warn(`channel.manager is shutting down; message for session ${String(fieldOf(message, "session_id") ?? "?")} not taken`);
      return Promise.resolve();
    }
    if (!channel.needsDebounce) return new Promise((resolve) => this.#enqueue(message, resolve));
    const key = `${channelName}\u0000${String(fieldOf(message, "session_id") ?? fieldOf(message, "chat_id") ?? "default")}`;
    let debouncer = this.#debouncers.get(key);
    if (!debouncer) {
      debouncer = new BufferedMessageHandler((batch) => this.#enqueue(batch, () => {}), this.#debounceWindows(), this.#options.clock ?? systemClock);
      this.#debouncers.set(key, debouncer);
    }
    debouncer.handle(message);
    return Promise.resolve();
  }

  #debounceWindows(): DebounceWindows {
    const given = this.#options.debounce ?? {};
    return {
      debounceSeconds: given.debounceSeconds ?? settingNumber(this.framework, "debounce_seconds", 1),
      maxWaitSeconds: given.maxWaitSeconds ?? settingNumber(this.framework, "max_wait_seconds", 10),
      activeTimeWindow: given.activeTimeWindow ?? settingNumber(this.framework, "active_time_window", 60),
    };
  }

  #enqueue(message: Envelope, admitted: () => void): void {
    this.#inbound.push({ message, admitted });
    if (this.#started && this.#pumping === null) this.#pumping = this.#pump();
  }

  /** Admits queued messages one at a time, in arrival order. */
  async #pump(): Promise<void> {
    try {
      while (this.#inbound.length > 0) {
        const { message, admitted } = this.#inbound.shift()!;
        try {
          const turns = await this.#admit(message);
          if (turns) this.#schedule(turns, message);
        } catch (error) {
          log.error("channel.manager failed to admit a message", error);
        } finally {
          admitted();
        }
      }
    } finally {
      this.#pumping = null;
      this.#checkIdle();
    }
  }

  // ---- admission ----------------------------------------------------------------------

  #sessionTurns(sessionId: string): SessionTurns {
    let turns = this.#sessions.get(sessionId);
    if (!turns) {
      turns = { sessionId, active: new Set(), pending: [] };
      this.#sessions.set(sessionId, turns);
    }
    return turns;
  }

  #dropIfIdle(turns: SessionTurns): void {
    if (turns.active.size === 0 && turns.pending.length === 0 && this.#sessions.get(turns.sessionId) === turns) this.#sessions.delete(turns.sessionId);
  }

  #admissionState(sessionId: string, message: Envelope): TurnState {
    const state: TurnState = { session_id: sessionId };
    const thread = threadIdOf(message);
    if (thread) state._runtime_thread_id = thread;
    return state;
  }

  #snapshot(turns: SessionTurns, state: TurnState): TurnSnapshot {
    const inbox = this.framework.steeringInbox;
    let runningCount = 0;
    for (const task of turns.active) if (!task.cancelled) runningCount++;
    return {
      sessionId: turns.sessionId,
      isRunning: runningCount > 0,
      runningCount,
      pendingCount: turns.pending.length,
      steeringCount: inbox ? inbox.messageCount(state) : 0,
    };
  }

  /** The session's turns when the message should start a turn now; null when it was dropped, queued or steered. */
  async #admit(message: Envelope): Promise<SessionTurns | null> {
    let sessionId: string;
    try {
      sessionId = await this.framework.resolveSession(message);
    } catch (error) {
      log.error("channel.manager could not resolve the session of a message; dropped", error);
      await this.framework.notifyError("resolve_session", error, message);
      return null;
    }
    setSessionId(message, sessionId);
    const turns = this.#sessionTurns(sessionId);
    const state = this.#admissionState(sessionId, message);
    let decision: AdmitDecision | null;
    try {
      decision = await this.framework.admitMessage(sessionId, message, this.#snapshot(turns, state));
    } catch (error) {
      log.error(`channel.manager admission failed for session ${sessionId}; processing the message`, error);
      await this.framework.notifyError("admit_message", error, message);
      return turns;
    }
    if (this.#apply(decision, turns, message, state)) return turns;
    this.#dropIfIdle(turns);
    return null;
  }

  #apply(decision: AdmitDecision | null, turns: SessionTurns, message: Envelope, state: TurnState): boolean {
    if (decision === null) return true;
    const busy = turns.active.size > 0;
    switch (decision.action) {
      case "process":
        return true;
      case "drop":
        log.info(`channel.manager admission drop session_id=${turns.sessionId}${decision.reason ? ` reason=${decision.reason}` : ""}`);
        return false;
      case "steer":
        if (busy && this.framework.steerMessage(message, turns.sessionId, state, decision.reason)) {
          log.info(`channel.manager admission steer session_id=${turns.sessionId}`);
          return false;
        }
        // Nothing can take it now: it waits for the running turn like a follow-up.
        return this.#followUp(turns, message, busy);
      case "follow_up":
        return this.#followUp(turns, message, busy);
      default:
        log.warn(`channel.manager unknown admission action '${String((decision as { action: unknown }).action)}'; processing the message`);
        return true;
    }
  }

  #followUp(turns: SessionTurns, message: Envelope, busy: boolean): boolean {
    // Invariant: a session with pending messages always has a running turn that will start them.
    if (!busy) return true;
    turns.pending.push(message);
    log.info(`channel.manager admission follow_up session_id=${turns.sessionId} pending=${turns.pending.length}`);
    return false;
  }

  // ---- scheduling ---------------------------------------------------------------------

  #schedule(turns: SessionTurns, message: Envelope): void {
    // The session may have gone idle (and been forgotten) since admission: re-register it.
    if (this.#sessions.get(turns.sessionId) !== turns) turns = this.#sessionTurns(turns.sessionId);
    const task: TurnTask = { message, controller: new AbortController(), done: Promise.resolve(), cancelled: false, stop: () => {} };
    turns.active.add(task);
    task.done = turnScope.run(task, () => this.#runTurn(turns, task));
  }

  async #runTurn(turns: SessionTurns, task: TurnTask): Promise<void> {
    let resultState: TurnState | null = null;
    try {
      const turn = this.framework.processInbound(task.message, { streamOutput: this.#streamOutput() });
      // Ends with the turn, or at once when the turn is cancelled. A failed turn just ends:
      // processInbound already logged the failure and told onError.
      const result = await new Promise<TurnResult | null>((resolve) => {
        task.stop = () => resolve(null);
        if (task.cancelled) resolve(null);
        turn.then(resolve, () => resolve(null));
      });
      resultState = result?.state ?? null;
    } catch {
      // Reported by processInbound (onError stage "turn").
    } finally {
      turns.active.delete(task);
      if (task.cancelled) log.info(`channel.manager turn cancelled session_id=${turns.sessionId}`);
      else this.#promoteSteering(turns, task.message, resultState);
      this.#next(turns);
    }
  }

  /** Steering messages the turn left unread go to the front of the session's pending queue. */
  #promoteSteering(turns: SessionTurns, message: Envelope, resultState: TurnState | null): void {
    const inbox = this.framework.steeringInbox;
    if (!inbox) return;
    const leftovers: Envelope[] = [];
    const admission = this.#admissionState(turns.sessionId, message);
    if (resultState) leftovers.push(...inbox.drainMessages({ ...resultState, session_id: resultState.session_id ?? turns.sessionId }));
    leftovers.push(...inbox.drainMessages(admission));
    if (leftovers.length === 0) return;
    log.info(`channel.manager ${leftovers.length} unread steering message(s) queued as follow-ups session_id=${turns.sessionId}`);
    turns.pending.unshift(...leftovers);
  }

  /** Starts the session's next pending message once nothing of it runs. */
  #next(turns: SessionTurns): void {
    if (turns.active.size === 0 && turns.pending.length > 0) {
      const next = turns.pending.shift()!;
      this.#schedule(turns, next);
      return;
    }
    this.#dropIfIdle(turns);
    this.#checkIdle();
  }

  #streamOutput(): boolean {
    return this.#options.streamOutput ?? this.framework.settings.getValue("stream_output", false) === true;
  }

  #isIdle(): boolean {
    return this.#inbound.length === 0 && this.#pumping === null && this.#sessions.size === 0;
  }

  #checkIdle(): void {
    if (!this.#isIdle() || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * Resolves once nothing is queued, admitted-and-waiting or running (messages held by a
   * debounce window are not counted). For tests, benchmarks and graceful shutdown.
   */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** A session's current turn snapshot (for tools and status displays). */
  snapshot(sessionId: string): TurnSnapshot {
    const turns = this.#sessions.get(sessionId) ?? { sessionId, active: new Set<TurnTask>(), pending: [] };
    return this.#snapshot(turns, { session_id: sessionId });
  }

  // ---- ChannelRouter ------------------------------------------------------------------

  #targetOf(message: Envelope): Channel | null {
    const output = fieldOf(message, "output_channel");
    const target = typeof output === "string" && output !== "" ? output : fieldOf(message, "channel");
    if (typeof target !== "string" || target === "") return null;
    const channel = this.channels.get(target);
    return channel && this.#isStarted(channel) ? channel : null;
  }

  #isStarted(channel: Channel): boolean {
    return this.#startedChannels.includes(channel);
  }

  /** Sends an outbound to its `output_channel` (else `channel`); false when there is no such running channel. */
  async dispatchOutput(message: Envelope): Promise<boolean> {
    const channel = this.#targetOf(message);
    if (!channel) return false;
    const context = fieldOf(message, "context");
    const kind = fieldOf(message, "kind");
    const outbound = new ChannelMessage({
      sessionId: String(fieldOf(message, "session_id") || `${channel.name}:default`),
      channel: channel.name,
      chatId: String(fieldOf(message, "chat_id") || "default"),
      content: String(fieldOf(message, "content") ?? ""),
      context: typeof context === "object" && context !== null ? { ...(context as Record<string, unknown>) } : {},
      kind: kind === "command" || kind === "error" ? kind : "normal",
    });
    await channel.send(outbound);
    return true;
  }

  /** Lets the message's channel render or transform a turn's stream. */
  wrapStream(message: Envelope, stream: AsyncStreamEvents): AsyncStreamEvents {
    const channel = this.#targetOf(message);
    if (!channel?.streamEvents) return stream;
    return new AsyncStreamEvents(channel.streamEvents(message, stream), stream.state);
  }

  /** The admission policy of the message's own channel, if it has one. */
  async admitChannelMessage(sessionId: string, message: Envelope, turn: TurnSnapshot): Promise<AdmitDecision | null> {
    const channel = this.channels.get(String(fieldOf(message, "channel") ?? ""));
    if (!channel?.admitMessage) return null;
    return (await channel.admitMessage({ sessionId, message, turn })) ?? null;
  }

  /** Stops a session: forgets its pending messages and cancels its running turns (except the caller's own). */
  async quit(sessionId: string): Promise<void> {
    const turns = this.#sessions.get(sessionId);
    if (!turns) return;
    turns.pending.length = 0;
    const current = turnScope.getStore();
    const cancelled = [...turns.active].filter((task) => task !== current);
    for (const task of cancelled) this.#cancel(task);
    await Promise.all(cancelled.map((task) => task.done));
    this.#dropIfIdle(turns);
    log.info(`channel.manager quit session_id=${sessionId}, cancelled ${cancelled.length} tasks`);
  }

  #cancel(task: TurnTask): void {
    task.cancelled = true;
    task.controller.abort(new Error("turn cancelled"));
    task.stop();
  }

  // ---- lifecycle ----------------------------------------------------------------------

  /**
   * Binds the manager as the framework's router, enters `framework.running()`, starts the
   * enabled channels and processes messages until `signal` aborts or {@link shutdown} is
   * called; then shuts down gracefully and resolves.
   */
  run(signal?: AbortSignal): Promise<void> {
    if (this.#running) return Promise.reject(new Error("ChannelManager.run() is already running"));
    this.#running = this.#run(signal).finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #run(signal?: AbortSignal): Promise<void> {
    const stop = this.#stopController.signal;
    const onAbort = () => this.#stopTaking();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    await this.framework.settings.prepare();
    this.framework.bindChannelRouter(this);
    try {
      await this.framework.running(async () => {
        try {
          for (const channel of this.enabledChannels()) {
            await channel.start(stop);
            this.#startedChannels.push(channel);
          }
          this.#started = true;
          this.#ready.resolve();
          log.info(`channel.manager started listening channels=${this.#startedChannels.map((channel) => channel.name).join(",")}`);
          if (this.#inbound.length > 0 && this.#pumping === null) this.#pumping = this.#pump();
          if (!stop.aborted) await new Promise<void>((resolve) => stop.addEventListener("abort", () => resolve(), { once: true }));
        } catch (error) {
          this.#ready.reject(error);
          this.#ready.promise.catch(() => {});
          throw error;
        } finally {
          await this.#drain();
        }
      });
    } finally {
      signal?.removeEventListener("abort", onAbort);
      if (this.framework.router === this) this.framework.bindChannelRouter(null);
    }
  }

  /**
   * Stops taking messages, flushes debounce buffers, lets running and pending turns finish
   * for up to the grace period, then cancels what is left and stops the channels. Resolves
   * when {@link run} has returned (at once when it is not running).
   */
  async shutdown(): Promise<void> {
    this.#stopTaking();
    if (this.#running) await this.#running;
  }

  #stopTaking(): void {
    this.#accepting = false;
    this.#stopController.abort();
  }

  /** Resolves once {@link run} has started every enabled channel (rejects if starting failed). */
  ready(): Promise<void> {
    return this.#ready.promise;
  }

  async #drain(): Promise<void> {
    this.#stopTaking();
    for (const debouncer of this.#debouncers.values()) debouncer.flush();
    this.#debouncers.clear();
    this.#started = true;
    if (this.#inbound.length > 0 && this.#pumping === null) this.#pumping = this.#pump();
    const graceMs = (this.#options.graceSeconds ?? 30) * 1000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    });
    const finished = await Promise.race([this.idle().then(() => false), timedOut]);
    clearTimeout(timer);
    if (finished) {
      let cancelled = 0;
      for (const turns of this.#sessions.values()) {
        if (turns.pending.length > 0) log.warn(`channel.manager shutdown: ${turns.pending.length} pending message(s) not run session_id=${turns.sessionId}`);
        turns.pending.length = 0;
        for (const task of turns.active) {
          this.#cancel(task);
          cancelled++;
        }
      }
      await Promise.all([...this.#sessions.values()].flatMap((turns) => [...turns.active].map((task) => task.done)));
      log.warn(`channel.manager cancelled ${cancelled} in-flight tasks after the ${graceMs / 1000}s grace period`);
    }
    this.#sessions.clear();
    for (const channel of this.#startedChannels.splice(0).reverse()) {
      try {
        await channel.stop();
      } catch (error) {
        log.error(`channel.manager failed to stop channel '${channel.name}'`, error);
      }
    }
    this.#checkIdle();
    log.info("channel.manager stopped");
  }
}
