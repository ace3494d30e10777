import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MessageAssembler, SerialMessages } from "../../../src/channels/cli/input-lines.ts";
import type { StreamEvent } from "../../../src/kernel/stream.ts";
import { chatSession, deferred, typeKeys } from "./support.ts";

const text = (delta: string): StreamEvent => ({ kind: "text", data: { delta } });

describe("MessageAssembler", () => {
  it("keeps a bracketed paste together, markers arriving as text (piped input)", () => {
    const input = new MessageAssembler();
    assert.equal(input.push("\u001B[200~def f():"), null);
    assert.equal(input.push("    return 1"), null);
    assert.equal(input.collecting, true);
    assert.equal(input.push("print(f())\u001B[201~"), "def f():\n    return 1\nprint(f())");
    assert.equal(input.collecting, false);
    assert.equal(input.push("next"), "next");
  });

  it("keeps a paste together when readline reports its markers as keys, the line going on after it", () => {
    const input = new MessageAssembler();
    input.pasteStart();
    assert.equal(input.push("say one"), null);
    assert.equal(input.push("two"), null);
    input.pasteEnd();
    assert.equal(input.pasting, false);
    assert.equal(input.push("three and more typed"), "say one\ntwo\nthree and more typed");
  });

  it("joins lines ending in a backslash with the next, dropping the backslash; a pasted one is text", () => {
    const input = new MessageAssembler();
    assert.equal(input.push("first \\"), null);
    assert.equal(input.push("second\\"), null);
    assert.equal(input.push("third"), "first \nsecond\nthird");
    assert.equal(input.push("\u001B[200~ls \\\u001B[201~"), "ls \\");
  });

  it("flushes what was collected when the input ends, and forgets it on reset", () => {
    const input = new MessageAssembler();
    input.push("a \\");
    assert.equal(input.flush(), "a ");
    assert.equal(input.flush(), null);
    input.push("\u001B[200~b");
    input.reset();
    assert.equal(input.collecting, false);
    assert.equal(input.push("c"), "c");
  });
});

describe("SerialMessages", () => {
  it("sends one message at a time, each when the one before is done", () => {
    let busy = false;
    const sent: string[] = [];
    const serial = new SerialMessages(() => !busy, (message) => {
      sent.push(message);
      busy = message !== ",thinking";
    });
    serial.add("one");
    serial.add(",thinking");
    serial.add("two");
    assert.deepEqual(sent, ["one"]);
    busy = false;
    serial.drain();
    assert.deepEqual(sent, ["one", ",thinking", "two"], "a message that starts no turn does not hold up the next");
    assert.equal(serial.size, 0);
  });
});

describe("cli channel input", () => {
  it("piped lines are separate turns, answered in the order they came", async () => {
    const session = await chatSession(async function* (prompt) {
      await new Promise((resolve) => setTimeout(resolve, prompt === "first" ? 30 : 0));
      yield text(`answer to ${prompt}`);
    });
    const { terminal } = session;
    terminal.input.end("first\nsecond\nthird\n");
    await session.running;
    const output = terminal.text();
    assert.deepEqual(session.prompts, ["first", "second", "third"]);
    const positions = ["first", "second", "third"].map((name) => output.indexOf(`answer to ${name}`));
    assert.ok(positions.every((position, index) => position >= 0 && (index === 0 || position > positions[index - 1]!)), output);
    assert.doesNotMatch(output, /steering/);
    assert.match(output, /Bye\.\n$/);
  });

  it("a bracketed paste of three lines in a terminal is one message; the terminal is asked to mark pastes", async () => {
    const session = await chatSession(async function* (prompt) {
      yield text(`got ${prompt.split("\n").length} lines`);
    }, { tty: true });
    const { terminal } = session;
    await terminal.waitFor("demo-ws > ");
    assert.match(terminal.text(), /\u001B\[\?2004h/);
    await typeKeys(terminal.input, "\u001B[200~", "line one\r", "line two\r", "line three", "\u001B[201~", "\r");
    await terminal.waitFor("got 3 lines");
    await session.channel.whenIdle();
    assert.deepEqual(session.prompts, ["line one\nline two\nline three"]);
    terminal.input.write(",quit\r");
    await session.running;
    assert.match(terminal.text(), /\u001B\[\?2004l/, "paste marking is turned off on the way out");
  });

  it("a line ending in a backslash goes on at a continuation prompt", async () => {
    const session = await chatSession(async function* (prompt) {
      yield text(`got ${prompt.replace("\n", "+")}`);
    }, { tty: true });
    const { terminal } = session;
    await terminal.waitFor("demo-ws > ");
    await typeKeys(terminal.input, "one \\\r");
    await terminal.waitFor("... ");
    await typeKeys(terminal.input, "two\r");
    await terminal.waitFor("got one +two");
    await session.channel.whenIdle();
    terminal.input.write(",quit\r");
    await session.running;
  });

  it("Ctrl-C on an empty prompt says how to leave and a second one leaves; a key in between disarms it", async () => {
    const started = deferred();
    const session = await chatSession(async function* (prompt) {
      started.resolve();
      yield text(`got ${prompt}`);
    }, { tty: true });
    const { terminal } = session;
    await terminal.waitFor("demo-ws > ");
    await typeKeys(terminal.input, "\x03");
    await terminal.waitFor("(press Ctrl-C again or Ctrl-D to quit, or type ,quit)");
    assert.doesNotMatch(terminal.text(), /Interrupted/, "nothing was running, so nothing was interrupted");
    await typeKeys(terminal.input, "a", "\x03");
    assert.equal(session.channel.busy, false);
    await typeKeys(terminal.input, "hello\r");
    await terminal.waitFor("got hello");
    await session.channel.whenIdle();
    await typeKeys(terminal.input, "\x03", "\x03");
    await session.running;
    assert.match(terminal.text(), /Bye\./);
    assert.deepEqual(session.prompts, ["hello"], "the typed 'a' was cleared by Ctrl-C, not sent");
  });
});
