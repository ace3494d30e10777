import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { LiveRendering, printTurn } from "../../../src/channels/cli/render-turn.ts";
import { Terminal } from "../../../src/channels/cli/terminal.ts";
import { TurnPrinter } from "../../../src/channels/cli/turn-printer.ts";
import { AsyncStreamEvents, type StreamEvent } from "../../../src/kernel/stream.ts";
import { fakeTerminal } from "./support.ts";

const text = (delta: string): StreamEvent => ({ kind: "text", data: { delta } });

/** A plain (piped) terminal on fake streams, and a printer for one normal turn on it. */
function plain() {
  const fake = fakeTerminal(false);
  const terminal = new Terminal({ input: fake.input, output: fake.output, env: {} });
  const printer = new TurnPrinter(terminal, { kind: "normal", expandThinking: false, markdown: null, throttleMs: 0 });
  return { fake, terminal, printer };
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe("printTurn", () => {
  it("prints the stream and passes its events on, leading whitespace aside", async () => {
    const { fake, terminal, printer } = plain();
    const stream = AsyncStreamEvents.of([text("  "), text("hello"), text(" world")]);
    const passed = await collect(printTurn(printer, stream, new AbortController().signal));
    assert.deepEqual(passed, [text("hello"), text(" world")]);
    assert.match(fake.text(), /hello world/);
    terminal.close();
  });

  it("abandons the stream when the signal aborts and shows the turn as interrupted", async () => {
    const { fake, terminal, printer } = plain();
    const controller = new AbortController();
    async function* hanging(): AsyncGenerator<StreamEvent> {
      yield text("partial");
      await new Promise(() => {});
    }
    const passed: StreamEvent[] = [];
    for await (const event of printTurn(printer, new AsyncStreamEvents(hanging()), controller.signal)) {
      passed.push(event);
      controller.abort();
    }
    assert.deepEqual(passed, [text("partial")]);
    assert.match(fake.text(), /partial[\s\S]*Interrupted\./);
    terminal.close();
  });

  it("reads nothing when the signal has already aborted", async () => {
    const { fake, terminal, printer } = plain();
    const controller = new AbortController();
    controller.abort();
    assert.deepEqual(await collect(printTurn(printer, AsyncStreamEvents.of([text("never")]), controller.signal)), []);
    assert.doesNotMatch(fake.text(), /never/);
    assert.match(fake.text(), /Interrupted\./);
    terminal.close();
  });
});

describe("LiveRendering", () => {
  it("renders plain text on a terminal that is not interactive, loading nothing", async () => {
    const { terminal } = plain();
    const rendering = new LiveRendering();
    rendering.preload(terminal);
    assert.equal(await rendering.ready(terminal), null);
    terminal.close();
  });

  it("loads the Markdown renderer once for an interactive terminal", async () => {
    const fake = fakeTerminal(true);
    const terminal = new Terminal({ input: fake.input, output: fake.output, env: {} });
    const rendering = new LiveRendering();
    rendering.preload(terminal);
    const markdown = await rendering.ready(terminal);
    assert.equal(typeof markdown, "function");
    assert.equal(await rendering.ready(terminal), markdown);
    terminal.close();
  });
});
