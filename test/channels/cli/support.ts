// Builds a framework with scripted models, a channel manager and the CLI channel on fake streams.
import { PassThrough } from "node:stream";
import { BubFramework } from "../../../src/kernel/framework.ts";
import { AsyncStreamEvents, type StreamEvent } from "../../../src/kernel/stream.ts";
import type { BubPlugin } from "../../../src/kernel/hooks.ts";
import type { Envelope } from "../../../src/kernel/envelope.ts";
import type { TurnContext } from "../../../src/kernel/turn-context.ts";
import type { SteeringInbox, TurnState } from "../../../src/kernel/types.ts";
import { ChannelManager } from "../../../src/channels/manager.ts";
import { createSteeringInbox } from "../../../src/channels/steering.ts";
import { createCliChannel, type CliChannel, type CliChannelOptions } from "../../../src/channels/cli/index.ts";
import { kernelFramework } from "../../support/framework.ts";

/** A fake terminal stream pair; `text()` is everything written so far. */
export function fakeTerminal(tty: boolean, size = { columns: 80, rows: 24 }) {
  const input = new PassThrough() as PassThrough & { isTTY?: boolean };
  const output = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number; rows?: number };
  if (tty) {
    input.isTTY = true;
    output.isTTY = true;
    output.columns = size.columns;
    output.rows = size.rows;
  }
  let written = "";
  const listeners: (() => void)[] = [];
  output.on("data", (chunk: Buffer) => {
    written += chunk.toString("utf8");
    for (const listener of listeners.splice(0)) listener();
  });
  return {
    input,
    output,
    text: () => written,
    /** Resolves once the output matches (checked on every write). */
    async waitFor(pattern: RegExp | string): Promise<void> {
      const matches = () => (typeof pattern === "string" ? written.includes(pattern) : pattern.test(written));
      while (!matches()) await new Promise<void>((resolve) => listeners.push(resolve));
    },
  };
}

/** A deferred value. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/** The scripted model: called with the prompt, the turn state, the turn's signal and its typed context (its hook arguments); yields events. */
export type Script = (prompt: string, state: TurnState, signal: AbortSignal, context: TurnContext) => AsyncGenerator<StreamEvent>;

/** Framework + manager + CLI channel wired like `bub chat`, with a scripted model. */
export async function chatSession(script: Script, options: CliChannelOptions & { tty?: boolean; extraPlugins?: BubPlugin[] } = {}) {
  const framework = kernelFramework({ workspace: "/tmp/demo-ws" });
  const inbox = createSteeringInbox();
  const steered = deferred<Envelope>();
  const observed: SteeringInbox = {
    enqueueMessage(message, target) {
      inbox.enqueueMessage(message, target);
      steered.resolve(message);
    },
    drainMessages: (target) => inbox.drainMessages(target),
    messageCount: (target) => inbox.messageCount(target),
  };
  const prompts: string[] = [];
  const plugin: BubPlugin = {
    name: "scripted",
    provideSteeringInbox: () => observed,
    loadState: ({ message }) => {
      void message.lifespan?.enter();
      return {};
    },
    saveState: ({ message }) => {
      void message.lifespan?.exit();
    },
    runModelStream: ({ prompt, state, signal, context }) => {
      prompts.push(String(prompt));
      return new AsyncStreamEvents(script(String(prompt), state, signal, context));
    },
  };
  for (const extra of options.extraPlugins ?? []) framework.runtime.register(extra, extra.name ?? "extra");
  framework.runtime.register(plugin, "scripted");
  const terminal = fakeTerminal(options.tty ?? false);
  const stop = new AbortController();
  let channel!: CliChannel;
  const manager = new ChannelManager(framework, {
    enabledChannels: ["cli"],
    streamOutput: true,
    graceSeconds: 1,
    channels: (messageHandler) => [
      (channel = createCliChannel(framework, {
        messageHandler,
        input: terminal.input,
        output: terminal.output,
        historyFile: null,
        model: "test:scripted",
        env: {},
        onExit: () => stop.abort(),
        ...options,
      })),
    ],
  });
  const running = manager.run(stop.signal);
  await manager.ready();
  return { framework, manager, channel, terminal, running, steered, prompts, stop, inbox };
}

/** Writes each chunk as its own keypress burst, letting readline handle one before the next. */
export async function typeKeys(input: NodeJS.WritableStream, ...chunks: string[]): Promise<void> {
  for (const chunk of chunks) {
    input.write(chunk);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
