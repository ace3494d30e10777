/**
 * The channel manager: starts the enabled channels, turns what they receive into turns
 * (debounce, admission, scheduling), routes outbound messages and streams back to the
 * right channel, and shuts everything down gracefully. Each of those lives in its own
 * module; this one wires them together and into the framework as a plugin (`channels`).
 */
import { createLogger } from "../kernel/log.ts";
import { toEnvelope, type Envelope, type EnvelopeInput } from "../kernel/envelope.ts";
import type { AsyncStreamEvents } from "../kernel/stream.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { BubPlugin, HookArgs, NextHook } from "../kernel/hooks.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import type { Channel, MessageHandler, TurnSnapshot } from "../kernel/types.ts";
import { channelAdmission } from "./admission.ts";
import { ChannelDebouncers, debounceWindows } from "./debouncers.ts";
import { InboundQueue } from "./inbound-queue.ts";
import { OutboundRouter } from "./outbound.ts";
import { logInbound } from "./traffic.ts";
import { selectChannels } from "./selection.ts";
import { graceExpired, stopChannels } from "./shutdown.ts";
import { IdleWaiters } from "./idle.ts";
import type { ChannelManagerOptions } from "./manager-options.ts";
import { TurnAdmission } from "./turn-admission.ts";
import { TurnRunner } from "./turn-runner.ts";

export type { ChannelManagerOptions } from "./manager-options.ts";

const log = createLogger("bub:channels");

/** What a turn a newer message superseded still tries to send (its reply, its error) is not sent. */
function withheld(message: Envelope): boolean {
  log.info(`channel.manager withheld an outbound of an interrupted turn session_id=${message.sessionId ?? "?"}`);
  return true;
}

/**
 * Runs channels and schedules their messages as turns. While it runs it is registered as
 * the plugin `channels` ({@link plugin}): it delivers outbounds, shows streams, admits
 * messages, asks for approvals and stops sessions for the channels it runs.
 *
 * Each received message goes through (in arrival order): debounce (channels with
 * `needsDebounce`), `resolveSession`, then admission — the `admitMessage` hook decides
 * `process` (run now, alongside any running turn of the session), `drop`, `follow_up`
 * (run after the session's running turn, first in first out) or `steer` (hand it to the
 * running turn through the steering inbox; when nothing can take it, it becomes a
 * follow-up), `collect` (run after the running turn, merged with the others that arrived
 * meanwhile into one turn) or `interrupt` (cancel the running turn and run this one). No
 * answer means `process`. Steering messages the turn did not consume move
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
export class ChannelManager {
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
  readonly #runner: TurnRunner;
  readonly #queue: InboundQueue;
  readonly #debouncers: ChannelDebouncers;
  readonly #outbound: OutboundRouter;
  #accepting = true;
  #stopController = new AbortController();
  readonly #idle = new IdleWaiters(() => this.#queue.idle && this.#runner.sessionCount === 0);
  #running: Promise<void> | null = null;
  #startedChannels: Channel[] = [];
  #ready = Promise.withResolvers<void>();

  constructor(framework: BubFramework, options: ChannelManagerOptions = {}) {
    this.framework = framework;
    this.#options = options;
    const checkIdle = () => this.#idle.check();
    this.#runner = new TurnRunner(framework, { streamOutput: options.streamOutput, onSettled: checkIdle });
    this.#queue = new InboundQueue(new TurnAdmission(framework, this.#runner), checkIdle);
    this.#debouncers = new ChannelDebouncers((batch) => this.#queue.enqueue(batch, null), () => debounceWindows(framework, options.debounce), options.clock);
    this.handleMessage = (message) => this.#receive(message);
    this.channels = framework.runtime.callSync("provideChannels", { messageHandler: this.handleMessage });
    const given = typeof options.channels === "function" ? options.channels(this.handleMessage) : options.channels;
    for (const channel of given ?? []) this.channels.set(channel.name, channel);
    this.#outbound = new OutboundRouter(this.channels, (channel) => this.#startedChannels.includes(channel));
  }

  /** The channels this manager runs, in precedence order (see {@link ChannelManagerOptions.enabledChannels}). */
  enabledChannels(): Channel[] {
    const configured = this.#options.enabledChannels ?? String(this.framework.settings.getValue("enabled_channels", "all")).split(",");
    return selectChannels(this.channels.values(), configured);
  }

  /** Resolves once the message is admitted (started, queued, steered or dropped) or buffered by debounce. */
  #receive(input: Envelope | EnvelopeInput): Promise<void> {
    const message = toEnvelope(input);
    const channelName = message.channel;
    const channel = this.channels.get(channelName);
    if (!channel) {
      log.warn(`channel.manager received a message for unknown channel '${channelName}'; ignored`);
      return Promise.resolve();
    }
    if (!this.#accepting) {
      log.warn(`channel.manager is shutting down; message for session ${message.sessionId ?? "?"} not taken`);
      return Promise.resolve();
    }
    logInbound(message);
    if (!channel.needsDebounce) return this.#queue.take(message);
    this.#debouncers.handle(channelName, message);
    return Promise.resolve();
  }

  /**
   * Resolves once nothing is queued, admitted-and-waiting or running (messages held by a
   * debounce window are not counted). For tests, benchmarks and graceful shutdown.
   */
  idle(): Promise<void> {
    return this.#idle.wait();
  }

  /** A session's current turn snapshot (for tools and status displays). */
  snapshot(sessionId: string): TurnSnapshot {
    return this.#runner.snapshotOf(sessionId);
  }

  /**
   * The manager's hooks, registered as `channels` (above every other plugin) while it runs;
   * `runModelStream` only when it streams (its `streamOutput` option, else the
   * `stream_output` setting as it starts). See docs/hooks.md, "Channels are plugins".
   */
  plugin(): BubPlugin {
    // A manager that never streams (a gateway, by default) stays out of the model hook's way.
    const streams = this.#options.streamOutput ?? this.framework.settings.getValue("stream_output", false) === true;
    return {
      name: "channels",
      dispatchOutbound: ({ message, context }) => (this.#runner.superseded(context) ? withheld(message) : this.dispatchOutput(message, context)),
      ...(streams && {
        runModelStream: async (args: HookArgs<"runModelStream">, next: NextHook<"runModelStream">) => {
          const stream = await next();
          const message = this.#runner.streamingMessage(args.signal);
          return stream && message ? this.wrapStream(message, stream, args.context) : stream;
        },
      }),
      admitMessage: async (args, next) => (await next()) ?? channelAdmission(this.framework, this.channels.get(args.message.channel), args),
      askApproval: ({ request, signal }) => this.#outbound.askApproval(request, signal),
      quitSession: ({ sessionId, context }) => this.quit(sessionId, context),
    };
  }

  /** Sends an outbound to its `output_channel` (else `channel`), with the turn's `context` when a turn sends it; false when there is no such running channel. */
  dispatchOutput(message: Envelope, context?: TurnContext): Promise<boolean> {
    return this.#outbound.dispatch(message, context);
  }

  /** Lets the message's channel render or transform a turn's stream (`context`: the turn's, handed to the channel). */
  wrapStream(message: Envelope, stream: AsyncStreamEvents, context?: TurnContext): AsyncStreamEvents {
    return this.#outbound.wrapStream(message, stream, context);
  }

  /** Stops a session: forgets its pending messages and cancels its running turns (except `caller`'s, the turn asking). */
  quit(sessionId: string, caller?: TurnContext): Promise<void> {
    return this.#runner.quit(sessionId, caller);
  }

  /**
   * Stops admitting messages and cancels every running turn with `reason` (what their signal
   * aborts with, e.g. a `TurnInterrupted`); resolves with how many turns it cancelled once
   * they have returned (their tapes written). The channels keep running until {@link run}'s
   * signal aborts or {@link shutdown} is called.
   */
  interrupt(reason: unknown): Promise<number> {
    this.#accepting = false;
    return this.#runner.interruptAll(reason);
  }

  // ---- lifecycle ----------------------------------------------------------------------

  /**
   * Registers the manager's {@link plugin}, enters `framework.running()`, starts the
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
    const unregister = this.framework.runtime.register(this.plugin(), "channels");
    try {
      await this.framework.running(async () => {
        try {
          for (const channel of this.enabledChannels()) {
            await channel.start(stop);
            this.#startedChannels.push(channel);
          }
          this.#ready.resolve();
          log.info(`channel.manager started listening channels=${this.#startedChannels.map((channel) => channel.name).join(",")}`);
          this.#queue.start();
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
      unregister();
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
    this.#debouncers.flushAll();
    this.#queue.start();
    const graceMs = (this.#options.graceSeconds ?? 30) * 1000;
    if (await graceExpired(this.idle(), graceMs)) {
      const cancelled = await this.#runner.cancelAll();
      log.warn(`channel.manager cancelled ${cancelled} in-flight tasks after the ${graceMs / 1000}s grace period`);
    }
    this.#runner.clear();
    await stopChannels(this.#startedChannels.splice(0).reverse());
    this.#idle.check();
    log.info("channel.manager stopped");
  }
}
