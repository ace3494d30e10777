/**
 * The channel manager: starts the enabled channels, turns what they receive into turns
 * (debounce, admission, scheduling), routes outbound messages and streams back to the
 * right channel, and shuts everything down gracefully.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createLogger } from "../kernel/log.ts";
import { fieldOf, type Envelope } from "../kernel/envelope.ts";
import { AsyncStreamEvents } from "../kernel/stream.ts";
import { isThenable, type Awaitable } from "../kernel/runtime.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { AdmitDecision, Channel, ChannelRouter, MessageHandler, TurnResult, TurnSnapshot, TurnState } from "../kernel/types.ts";
import type { ImmediateChannelAdmission } from "./admission.ts";
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

/** A session's turns: the ones running and the admitted messages waiting for them. */
interface SessionTurns {
  readonly sessionId: string;
  readonly active: RunningTurns;
  readonly pending: Envelope[];
}

/**
 * The running turns of one session, in start order. Usually none or one: kept in a field,
 * so starting and ending a turn allocates nothing (a Set reallocates its table each time).
 */
class RunningTurns {
  #first: TurnTask | null = null;
  /** Turns after the first, when several run side by side. */
  #rest: TurnTask[] | null = null;

  get size(): number {
    return this.#first === null ? 0 : 1 + (this.#rest === null ? 0 : this.#rest.length);
  }

  add(task: TurnTask): void {
    if (this.#first === null) this.#first = task;
    else (this.#rest ??= []).push(task);
  }

  delete(task: TurnTask): void {
    if (this.#first === task) {
      this.#first = this.#rest !== null && this.#rest.length > 0 ? this.#rest.shift()! : null;
      return;
    }
    const index = this.#rest === null ? -1 : this.#rest.indexOf(task);
    if (index >= 0) this.#rest!.splice(index, 1);
  }

  /** How many are not cancelled. */
  liveCount(): number {
    if (this.#first === null) return 0;
    let count = this.#first.cancelled ? 0 : 1;
    if (this.#rest !== null) for (const task of this.#rest) if (!task.cancelled) count++;
    return count;
  }

  /** A copy, in start order. */
  toArray(): TurnTask[] {
    if (this.#first === null) return [];
    return this.#rest === null ? [this.#first] : [this.#first, ...this.#rest];
  }
}

const RESOLVED: Promise<void> = Promise.resolve();
const RESOLVED_TRUE: Promise<boolean> = Promise.resolve(true);
const RESOLVED_FALSE: Promise<boolean> = Promise.resolve(false);

function returnTrue(): boolean {
  return true;
}

/**
 * One running turn. The abort controller and the `done` promise are made only when asked
 * for (a turn's signal by {@link currentTurnSignal}, `done` by quit and shutdown): most
 * turns end without either.
 */
class TurnTask {
  readonly message: Envelope;
  readonly turns: SessionTurns;
  cancelled = false;
  /** The manager stopped waiting for it: it finished, or was cancelled. */
  ended = false;
  #controller: AbortController | null = null;
  #done: PromiseWithResolvers<void> | null = null;

  constructor(message: Envelope, turns: SessionTurns) {
    this.message = message;
    this.turns = turns;
  }

  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal;
  }

  abort(reason: unknown): void {
    (this.#controller ??= new AbortController()).abort(reason);
  }

  /** Resolves once the manager stopped waiting for the turn. */
  get done(): Promise<void> {
    if (this.ended) return RESOLVED;
    return (this.#done ??= Promise.withResolvers<void>()).promise;
  }

  /** Marks the turn ended; false when it already was. */
  end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.#done?.resolve();
    return true;
  }
}

// processInbound only reads its options: one object per value instead of one per turn.
const STREAMED = Object.freeze({ streamOutput: true });
const NOT_STREAMED = Object.freeze({ streamOutput: false });

const turnScope = new AsyncLocalStorage<TurnTask>();

/**
 * The abort signal of the turn the caller runs in (under a {@link ChannelManager}), or null.
 * It aborts when the turn is cancelled by `quit(session)` or at the end of a shutdown's grace
 * period; long-running work (model calls, tools) should stop when it does.
 */
export function currentTurnSignal(): AbortSignal | null {
  return turnScope.getStore()?.signal ?? null;
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
export class ChannelManager implements ChannelRouter, ImmediateChannelAdmission {
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
  /** Messages waiting for admission, flat: message, then its admitted callback (or null). */
  #inbound: unknown[] = [];
  /** Index of the next message in {@link #inbound}. */
  #head = 0;
  /** A message is being admitted (synchronously or not): the others wait in {@link #inbound}. */
  #pumping = false;
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
    if (!channel.needsDebounce) return this.#take(message);
    const key = `${channelName}\u0000${String(fieldOf(message, "session_id") ?? fieldOf(message, "chat_id") ?? "default")}`;
    let debouncer = this.#debouncers.get(key);
    if (!debouncer) {
      debouncer = new BufferedMessageHandler((batch) => this.#enqueue(batch, null), this.#debounceWindows(), this.#options.clock ?? systemClock);
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

  /**
   * A message from a channel without debounce. With nothing ahead of it, it is admitted
   * (and its turn started) right away, and when that took no promise the caller gets an
   * already settled one; otherwise it waits its turn in the queue.
   */
  #take(message: Envelope): Promise<void> {
    if (!this.#started || this.#pumping || this.#head < this.#inbound.length) return new Promise((resolve) => this.#enqueue(message, resolve));
    // Taken while admitting it: a message handed in meanwhile (by a hook) queues behind it.
    this.#pumping = true;
    const pending = this.#admitOne(message);
    if (pending !== undefined) return pending.then(this.#resume);
    this.#pumping = false;
    this.#pump();
    return RESOLVED;
  }

  #enqueue(message: Envelope, admitted: (() => void) | null): void {
    this.#inbound.push(message, admitted);
    this.#pump();
  }

  /** Continues the queue after an admission that took a promise. */
  readonly #resume = (): void => {
    this.#pumping = false;
    this.#pump();
  };

  /**
   * Admits queued messages one at a time, in arrival order: synchronously for as long as
   * admissions answer synchronously; an admission that returns a promise is waited for
   * before the next message.
   */
  #pump(): void {
    if (!this.#started || this.#pumping) return;
    this.#pumping = true;
    const inbound = this.#inbound;
    while (this.#head < inbound.length) {
      const message = inbound[this.#head] as Envelope;
      const admitted = inbound[this.#head + 1] as (() => void) | null;
      inbound[this.#head] = inbound[this.#head + 1] = undefined;
      this.#head += 2;
      const pending = this.#admitOne(message);
      if (pending !== undefined) {
        void pending.then(() => {
          admitted?.();
          this.#resume();
        });
        return;
      }
      admitted?.();
    }
    if (this.#head > 0) {
      this.#inbound = [];
      this.#head = 0;
    }
    this.#pumping = false;
    this.#checkIdle();
  }

  /** Admits one message and starts its turn when it should run now; a promise only when admission took one. Never throws or rejects. */
  #admitOne(message: Envelope): Promise<void> | undefined {
    let turns: Awaitable<SessionTurns | null>;
    try {
      turns = this.#admit(message);
      if (!isThenable(turns)) {
        if (turns) this.#schedule(turns, message);
        return undefined;
      }
    } catch (error) {
      log.error("channel.manager failed to admit a message", error);
      return undefined;
    }
    return Promise.resolve(turns).then(
      (admitted) => {
        if (admitted) this.#schedule(admitted, message);
      },
      (error: unknown) => log.error("channel.manager failed to admit a message", error),
    ).catch((error: unknown) => log.error("channel.manager failed to admit a message", error));
  }

  // ---- admission ----------------------------------------------------------------------

  #sessionTurns(sessionId: string): SessionTurns {
    let turns = this.#sessions.get(sessionId);
    if (!turns) {
      turns = { sessionId, active: new RunningTurns(), pending: [] };
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
    const runningCount = turns.active.liveCount();
    return {
      sessionId: turns.sessionId,
      isRunning: runningCount > 0,
      runningCount,
      pendingCount: turns.pending.length,
      steeringCount: inbox ? inbox.messageCount(state) : 0,
    };
  }

  /**
   * The session's turns when the message should start a turn now; null when it was dropped,
   * queued or steered. Synchronous when the `resolveSession` and `admitMessage` hooks are.
   */
  #admit(message: Envelope): Awaitable<SessionTurns | null> {
    let sessionId: Awaitable<string>;
    try {
      sessionId = this.framework.sessionOf(message);
    } catch (error) {
      return this.#unresolved(error, message);
    }
    if (!isThenable(sessionId)) return this.#admitIn(sessionId, message);
    return Promise.resolve(sessionId).then(
      (resolved) => this.#admitIn(resolved, message),
      (error: unknown) => this.#unresolved(error, message),
    );
  }

  async #unresolved(error: unknown, message: Envelope): Promise<null> {
    log.error("channel.manager could not resolve the session of a message; dropped", error);
    await this.framework.notifyError("resolve_session", error, message);
    return null;
  }

  #admitIn(sessionId: string, message: Envelope): Awaitable<SessionTurns | null> {
    setSessionId(message, sessionId);
    const turns = this.#sessionTurns(sessionId);
    const state = this.#admissionState(sessionId, message);
    let decision: Awaitable<AdmitDecision | null>;
    try {
      decision = this.framework.admissionOf(sessionId, message, this.#snapshot(turns, state));
    } catch (error) {
      return this.#admissionFailed(error, turns, message);
    }
    if (!isThenable(decision)) return this.#decide(decision, turns, message, state);
    return Promise.resolve(decision).then(
      (decided) => this.#decide(decided, turns, message, state),
      (error: unknown) => this.#admissionFailed(error, turns, message),
    );
  }

  async #admissionFailed(error: unknown, turns: SessionTurns, message: Envelope): Promise<SessionTurns> {
    log.error(`channel.manager admission failed for session ${turns.sessionId}; processing the message`, error);
    await this.framework.notifyError("admit_message", error, message);
    return turns;
  }

  #decide(decision: AdmitDecision | null, turns: SessionTurns, message: Envelope, state: TurnState): SessionTurns | null {
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

  /**
   * Starts a turn for the message. `inJob`: the caller is the tail of a promise job (a
   * turn's continuation, once it ended), where nothing runs after this in the job.
   */
  #schedule(turns: SessionTurns, message: Envelope, inJob = false): void {
    // The session may have gone idle (and been forgotten) since admission: re-register it.
    if (this.#sessions.get(turns.sessionId) !== turns) turns = this.#sessionTurns(turns.sessionId);
    const task = new TurnTask(message, turns);
    turns.active.add(task);
    if (inJob) {
      // A context entered in a promise job ends with the job, and nothing else of this job
      // runs after the turn's start: enterWith makes the turn's context once, where run()
      // makes it and then a copy of the caller's to restore (Node 24: two Map copies).
      turnScope.enterWith(task);
      ChannelManager.#runTurn(this, task);
    } else {
      // A static method with arguments rather than a closure per turn.
      turnScope.run(task, ChannelManager.#runTurn, this, task);
    }
  }

  /**
   * Runs a turn (inside its {@link turnScope}). The turn's end is handled in a promise job
   * (#finish relies on it), and a failed turn just ends: processInbound already logged it
   * and told onError.
   */
  static #runTurn(manager: ChannelManager, task: TurnTask): void {
    let turn: Promise<TurnResult>;
    try {
      turn = manager.framework.processInbound(task.message, manager.#streamOutput() ? STREAMED : NOT_STREAMED);
    } catch (error) {
      turn = Promise.reject(error);
    }
    turn.then(
      (result) => manager.#finish(task, result.state),
      () => manager.#finish(task, null),
    );
  }

  /**
   * The turn ended (or was cancelled): promote its unread steering, start the session's next
   * message. Always the last thing its promise job does (the end of #runTurn, or the
   * microtask #cancel queues), which #next relies on.
   */
  #finish(task: TurnTask, resultState: TurnState | null): void {
    if (!task.end()) return; // cancelled earlier; what it did after that is not waited for
    const turns = task.turns;
    turns.active.delete(task);
    try {
      if (task.cancelled) log.info(`channel.manager turn cancelled session_id=${turns.sessionId}`);
      else this.#promoteSteering(turns, task.message, resultState);
    } finally {
      this.#next(turns);
    }
  }

  /** Steering messages the turn left unread go to the front of the session's pending queue. */
  #promoteSteering(turns: SessionTurns, message: Envelope, resultState: TurnState | null): void {
    const inbox = this.framework.steeringInbox;
    if (!inbox) return;
    let leftovers: Envelope[] = [];
    if (resultState) leftovers = inbox.drainMessages(resultState.session_id === undefined || resultState.session_id === null ? { ...resultState, session_id: turns.sessionId } : resultState);
    const unread = inbox.drainMessages(this.#admissionState(turns.sessionId, message));
    if (unread.length > 0) leftovers = leftovers.length > 0 ? [...leftovers, ...unread] : unread;
    if (leftovers.length === 0) return;
    log.info(`channel.manager ${leftovers.length} unread steering message(s) queued as follow-ups session_id=${turns.sessionId}`);
    turns.pending.unshift(...leftovers);
  }

  /** Starts the session's next pending message once nothing of it runs (called last in a promise job: see #finish). */
  #next(turns: SessionTurns): void {
    if (turns.active.size === 0 && turns.pending.length > 0) {
      const next = turns.pending.shift()!;
      this.#schedule(turns, next, true);
      return;
    }
    this.#dropIfIdle(turns);
    this.#checkIdle();
  }

  #streamOutput(): boolean {
    return this.#options.streamOutput ?? this.framework.settings.getValue("stream_output", false) === true;
  }

  #isIdle(): boolean {
    return this.#head === this.#inbound.length && !this.#pumping && this.#sessions.size === 0;
  }

  #checkIdle(): void {
    if (this.#idleWaiters.length === 0 || !this.#isIdle()) return;
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
    const turns = this.#sessions.get(sessionId) ?? { sessionId, active: new RunningTurns(), pending: [] };
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
  dispatchOutput(message: Envelope): Promise<boolean> {
    // Not an async function: one reaction on the channel's send instead of a suspended
    // function per outbound. Failures still come back as a rejection.
    try {
      const channel = this.#targetOf(message);
      if (!channel) return RESOLVED_FALSE;
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
      const sent = channel.send(outbound);
      return isThenable(sent) ? Promise.resolve(sent).then(returnTrue) : RESOLVED_TRUE;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Lets the message's channel render or transform a turn's stream. */
  wrapStream(message: Envelope, stream: AsyncStreamEvents): AsyncStreamEvents {
    const channel = this.#targetOf(message);
    if (!channel?.streamEvents) return stream;
    return new AsyncStreamEvents(channel.streamEvents(message, stream), stream.state);
  }

  /** The admission policy of the message's own channel, if it has one. */
  async admitChannelMessage(sessionId: string, message: Envelope, turn: TurnSnapshot): Promise<AdmitDecision | null> {
    return this.channelAdmission(sessionId, message, turn);
  }

  /** {@link admitChannelMessage} without a promise when the channel answers synchronously (or has no policy). */
  channelAdmission(sessionId: string, message: Envelope, turn: TurnSnapshot): Awaitable<AdmitDecision | null> {
    const channel = this.channels.get(String(fieldOf(message, "channel") ?? ""));
    if (!channel?.admitMessage) return null;
    const decision = channel.admitMessage({ sessionId, message, turn });
    if (isThenable(decision)) return Promise.resolve(decision).then((answer) => answer ?? null);
    return decision ?? null;
  }

  /** Stops a session: forgets its pending messages and cancels its running turns (except the caller's own). */
  async quit(sessionId: string): Promise<void> {
    const turns = this.#sessions.get(sessionId);
    if (!turns) return;
    turns.pending.length = 0;
    const current = turnScope.getStore();
    const cancelled = turns.active.toArray().filter((task) => task !== current);
    for (const task of cancelled) this.#cancel(task);
    await Promise.all(cancelled.map((task) => task.done));
    this.#dropIfIdle(turns);
    log.info(`channel.manager quit session_id=${sessionId}, cancelled ${cancelled.length} tasks`);
  }

  #cancel(task: TurnTask): void {
    task.cancelled = true;
    task.abort(new Error("turn cancelled"));
    // Stop waiting for it at once (in a microtask, as a settled turn would).
    queueMicrotask(() => this.#finish(task, null));
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
          this.#pump();
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
    this.#pump();
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
        for (const task of turns.active.toArray()) {
          this.#cancel(task);
          cancelled++;
        }
      }
      await Promise.all([...this.#sessions.values()].flatMap((turns) => turns.active.toArray().map((task) => task.done)));
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
