/**
 * Helpers for channel tests: a framework with test plugins, a recording channel, a model
 * whose turns finish only when the test says so, and a running channel manager.
 */
import { BubFramework } from "../../src/kernel/framework.ts";
import type { Envelope, Prompt } from "../../src/kernel/envelope.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import type { TurnContext } from "../../src/kernel/turn-context.ts";
import type { AdmitDecision, Channel, ChannelKind, TurnSnapshot, TurnState } from "../../src/kernel/types.ts";
import { createSteeringInbox } from "../../src/channels/steering.ts";
import { ChannelManager } from "../../src/channels/manager.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kernelFramework } from "../support/framework.ts";

/** A promise with its resolve/reject handles. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** A fresh {@link Deferred}. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** A framework (kernel only, no builtin plugin) with the given plugins, first lowest precedence. */
export function testFramework(plugins: BubPlugin[], env: NodeJS.ProcessEnv = {}): BubFramework {
  // A home of its own: the Telegram channel keeps its inbound journal there.
  const bub = kernelFramework({ env, home: mkdtempSync(join(tmpdir(), "bub-channels-home-")) });
  plugins.forEach((plugin, index) => bub.runtime.register(plugin, plugin.name ?? `p${index}`));
  return bub;
}

/** One model call in flight. */
export interface ModelCall {
  prompt: Prompt;
  state: TurnState;
  /** The turn's typed context, as the hook's arguments gave it. */
  context: TurnContext;
  sessionId: string;
  /** The turn's signal, as the hook's arguments gave it. */
  signal: AbortSignal;
  /** Steering messages the call took from the inbox (when it drains). */
  steered: Envelope[];
  finish(output?: string): void;
  fail(error: Error): void;
}

/**
 * A model plugin whose every call waits for the test to `finish()` it. `drainSteering`
 * makes each call read the steering inbox once, after it is finished (like an agent step).
 */
export function gatedModel(options: { drainSteering?: boolean } = {}) {
  const calls: ModelCall[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const notify = () => {
    waiters = waiters.filter((waiter) => {
      if (calls.length < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  };
  const plugin: BubPlugin = {
    name: "gated-model",
    loadState: ({ sessionId }) => ({ session_id: sessionId }),
    runModel: async ({ prompt, state, context, sessionId, signal }) => {
      const gate = deferred<string>();
      const call: ModelCall = {
        prompt,
        state,
        context,
        sessionId,
        signal,
        steered: [],
        finish: (output = `done:${String(prompt)}`) => gate.resolve(output),
        fail: (error) => gate.reject(error),
      };
      calls.push(call);
      notify();
      const output = await gate.promise;
      if (options.drainSteering) {
        if (context.steering) call.steered.push(...context.steering.drainMessages(context));
      }
      return output;
    },
  };
  return {
    plugin,
    calls,
    /** Resolves once `count` calls have been made in total. */
    callCount(count: number): Promise<void> {
      if (calls.length >= count) return Promise.resolve();
      const waiter = deferred();
      waiters.push({ count, resolve: () => waiter.resolve() });
      return waiter.promise;
    },
    /** Finishes the first `count` calls one after another, waiting for each to be made. */
    async finishInOrder(count: number): Promise<void> {
      for (let index = 0; index < count; index++) {
        await this.callCount(index + 1);
        calls[index]!.finish();
      }
    },
    prompts(): string[] {
      return calls.map((call) => String(call.prompt));
    },
  };
}

/** A plugin providing the in-memory steering inbox. */
export const steeringPlugin: BubPlugin = { name: "steering", provideSteeringInbox: () => createSteeringInbox() };

/** A plugin answering admission with `decide(content)`. */
export function admissionPlugin(decide: (content: string, turn: TurnSnapshot) => AdmitDecision | null): BubPlugin {
  return { name: "admission", admitMessage: ({ message, turn }) => decide(message.content, turn) };
}

/** A channel that records what happens to it. */
export class RecordingChannel implements Channel {
  readonly name: string;
  readonly kind?: ChannelKind;
  readonly needsDebounce?: boolean;
  readonly enabled?: boolean;
  readonly sent: Envelope[] = [];
  readonly events: string[] = [];
  policy: ((turn: TurnSnapshot) => AdmitDecision | null) | null = null;
  startSignal: AbortSignal | null = null;

  constructor(name: string, options: { kind?: ChannelKind; needsDebounce?: boolean; enabled?: boolean } = {}) {
    this.name = name;
    this.kind = options.kind;
    this.needsDebounce = options.needsDebounce;
    this.enabled = options.enabled;
  }

  async start(signal: AbortSignal): Promise<void> {
    this.startSignal = signal;
    this.events.push("start");
  }

  async stop(): Promise<void> {
    this.events.push("stop");
  }

  async send(message: Envelope): Promise<void> {
    this.sent.push(message);
    this.events.push(`send:${message.content}`);
  }

  admitMessage({ turn }: { sessionId: string; message: Envelope; turn: TurnSnapshot }): AdmitDecision | null {
    return this.policy ? this.policy(turn) : null;
  }
}

/** A message of session `<channel>:<chat>` (default `test:1`), filed under `thread` when given. */
export function message(content: string, options: { chat?: string; channel?: string; thread?: string } = {}): ChannelMessage {
  const channel = options.channel ?? "test";
  const chatId = options.chat ?? "1";
  return new ChannelMessage({ sessionId: `${channel}:${chatId}`, channel, chatId, content, context: options.thread ? { thread_id: options.thread } : {} });
}

/** A model answering "ok" after one microtask, recording each session's prompts in order. */
export function instantModel(): { seen: Map<string, string[]>; model: BubPlugin } {
  const seen = new Map<string, string[]>();
  const model: BubPlugin = {
    name: "instant",
    runModel: async ({ prompt, sessionId }) => {
      const list = seen.get(sessionId) ?? [];
      list.push(String(prompt));
      seen.set(sessionId, list);
      await Promise.resolve();
      return "ok";
    },
  };
  return { seen, model };
}

/** A manager over one recording channel (default `test`), already running; `stop.abort()` then `await done` ends it. */
export async function running(plugins: BubPlugin[], options: { env?: NodeJS.ProcessEnv; graceSeconds?: number; channel?: RecordingChannel } = {}) {
  let bub!: BubFramework;
  bub = testFramework(plugins, options.env);
  const channel = options.channel ?? new RecordingChannel("test");
  const manager = new ChannelManager(bub, { channels: [channel], enabledChannels: [channel.name], graceSeconds: options.graceSeconds ?? 30 });
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  await manager.ready();
  return { bub, manager, channel, stop, done };
}
