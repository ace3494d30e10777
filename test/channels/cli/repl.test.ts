import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { stripVTControlCharacters } from "node:util";
import { reportToolError, reportToolStart, reportToolSuccess } from "../../../src/tools/reporting.ts";
import { toEnvelope } from "../../../src/kernel/envelope.ts";
import type { StreamEvent } from "../../../src/kernel/stream.ts";
import { chatSession, deferred, typeKeys } from "./support.ts";

const text = (delta: string): StreamEvent => ({ kind: "text", data: { delta } });

describe("cli channel REPL (plain output)", () => {
  it("runs a turn, shows a tool line, steers the running turn and leaves on ,quit (a dumb terminal)", async () => {
    const toolDone = deferred();
    const session = await chatSession(async function* (prompt, _state, _signal, context) {
      if (prompt !== "hello") {
        yield text(`follow-up: ${prompt}`);
        return;
      }
      yield text("  ");
      yield text("# Title\n\nSome **bold** text.\n");
      yield { kind: "tool_call", data: { tool_calls: [{ id: "1", function: { name: "fs.read", arguments: '{"path":"README.md"}' } }] } };
      const reporter = context.toolReporter ?? undefined;
      await reportToolStart(reporter, "fs.read", { path: "README.md" });
      await reportToolSuccess(reporter, "fs.read", "contents", 12);
      yield { kind: "tool_result", data: { tool_results: ["contents"] } };
      toolDone.resolve();
      await session.steered.promise;
      const steering = (context.steering?.drainMessages(context) ?? []).map((message) => message.content);
      yield text(`Got steering: ${steering.join(", ")}`);
      yield { kind: "final", data: { ok: true } };
    }, { tty: true, interactive: false });
    const { terminal } = session;
    await terminal.waitFor("type ',help'");
    terminal.input.write("hello\n");
    await toolDone.promise;
    await terminal.waitFor("⎿ completed in 12 ms");
    terminal.input.write("also this\n");
    await terminal.waitFor("Got steering: also this");
    await session.channel.whenIdle();
    terminal.input.write(",quit\n");
    await session.running;
    const output = terminal.text();
    assert.match(output, /workspace: \/tmp\/demo-ws\nmodel: test:scripted/);
    assert.match(output, /^demo-ws > # Title\n\nSome \*\*bold\*\* text\.\n● fs\.read\(path: "README\.md"\)\n  ⎿ completed in 12 ms\n/m);
    assert.match(output, /demo-ws > \(steering\) also this/);
    assert.match(output, /Bye\.\n$/);
    assert.doesNotMatch(output, /\u001b\[/, "no escape sequences when output is piped");
    assert.deepEqual(session.prompts, ["hello"], "the steering message went to the running turn, not a new one");
  });

  it("collapses reasoning by default, expands it after ,thinking and leaves at the end of input", async () => {
    const session = await chatSession(async function* (prompt) {
      yield { kind: "reasoning", data: { delta: "pondering" } };
      yield text(`ran ${prompt}`);
    });
    const { terminal } = session;
    terminal.input.write("first\n");
    await terminal.waitFor("ran first");
    await session.channel.whenIdle();
    assert.match(terminal.text(), /\[\+\] Thinking \(9 chars hidden\)\nran first/);
    terminal.input.write(",thinking\n");
    await terminal.waitFor("Thinking output is now expanded.");
    terminal.input.write("second\n");
    await terminal.waitFor("ran second");
    assert.match(terminal.text(), /\[-\] Thinking\npondering\nran second/);
    await session.channel.whenIdle();
    terminal.input.end();
    await session.running;
    assert.match(terminal.text(), /Bye\.\n$/);
  });

  it("shows failed tool calls with the error and error outbounds as an error block", async () => {
    const session = await chatSession(async function* (_prompt, _state, _signal, context) {
      const reporter = context.toolReporter ?? undefined;
      await reportToolStart(reporter, "bash", { cmd: "false" });
      await reportToolError(reporter, "bash", new TypeError("exit status 1"), 3);
      yield text("done");
    });
    const { terminal } = session;
    terminal.input.write("go\n");
    await terminal.waitFor("done");
    await session.channel.whenIdle();
    await session.channel.send(toEnvelope({ kind: "error", content: "model down", channel: "cli" }));
    terminal.input.end();
    await session.running;
    assert.match(terminal.text(), /● bash\(cmd: "false"\)\n  ⎿ failed in 3 ms\n    \{\n      "type": "TypeError",\n      "message": "exit status 1"\n    \}/);
    assert.match(terminal.text(), /^bub: model down$/m);
  });
});

describe("cli channel REPL (terminal)", () => {
  it("renders markdown live and shows the spinner until the first token", async () => {
    const release = deferred();
    const session = await chatSession(
      async function* () {
        await release.promise;
        yield text("Here is **bold** and a list:\n\n- one\n- two\n\n```js\nconst x = 1;\n```\n");
      },
      { tty: true },
    );
    const { terminal } = session;
    await terminal.waitFor("demo-ws > ");
    terminal.input.write("show me\r");
    await terminal.waitFor("Generating");
    release.resolve();
    await terminal.waitFor("const x = 1;");
    await session.channel.whenIdle();
    terminal.input.write(",quit\r");
    await session.running;
    const output = terminal.text();
    assert.match(output, /bold/);
    assert.doesNotMatch(output, /\*\*bold\*\*/, "emphasis markers are rendered, not shown");
    assert.doesNotMatch(output, /```/, "code fences are rendered, not shown");
    assert.match(output, /one/);
    assert.match(output, /Bye\./);
  });

  it("shows the seconds and the tokens so far beside the spinner, headings without #, list code without backticks, and a blank line before the next prompt", async () => {
    const release = deferred();
    const session = await chatSession(
      async function* () {
        yield { kind: "usage", data: { prompt_tokens: 1200, completion_tokens: 34, total_tokens: 1234 } };
        await release.promise;
        yield text("## Plan\n\n- run `npm test` first\n- then **ship**\n");
      },
      { tty: true },
    );
    const { terminal } = session;
    await terminal.waitFor("demo-ws > ");
    terminal.input.write("plan it\r");
    await terminal.waitFor("1,234 tokens)");
    assert.match(stripVTControlCharacters(terminal.text()), /⠋ Generating \(\d+s · 1,234 tokens\)/);
    release.resolve();
    await terminal.waitFor("ship");
    await session.channel.whenIdle();
    terminal.input.write(",quit\r");
    await session.running;
    const output = stripVTControlCharacters(terminal.text());
    assert.match(output, /^Plan$/m, "the heading without its ##");
    assert.doesNotMatch(output, /## Plan/);
    assert.match(output, /run npm test first/, "inline code in a list item is styled, not backticked");
    assert.doesNotMatch(output, /`npm test`|\*\*ship\*\*/);
    // The live region is cleared and the cursor shown again; then a blank line, then the prompt.
    assert.match(terminal.text(), /\u001b\[\?25h\n(\u001b\[[0-9;]*[A-Za-z])*demo-ws > /, "a blank line between the answer and the next prompt");
  });

  it("completes ,<tool name> with Tab, toggles shell mode with Ctrl-X and interrupts a turn with Ctrl-C", async () => {
    const started = deferred();
    const cancelled = deferred();
    const session = await chatSession(
      async function* (prompt, _state, signal) {
        if (prompt === "wait forever") {
          started.resolve();
          signal.addEventListener("abort", () => cancelled.resolve());
          await new Promise(() => {});
        }
        yield text(`got ${prompt}`);
      },
      { tty: true, toolNames: () => ["fs.read", "fs.write", "bash"] },
    );
    const { terminal } = session;
    await terminal.waitFor("demo-ws > ");
    await typeKeys(terminal.input, ",fs.r", "\t", "\r");
    await terminal.waitFor("got ,fs.read");
    await session.channel.whenIdle();
    terminal.input.write("\x18");
    assert.equal(session.channel.mode, "shell");
    await terminal.waitFor("demo-ws , ");
    terminal.input.write("ls\r");
    await terminal.waitFor("got ,ls");
    await session.channel.whenIdle();
    terminal.input.write("\x18");
    terminal.input.write("wait forever\r");
    await started.promise;
    terminal.input.write("\x03");
    await cancelled.promise;
    await terminal.waitFor("Interrupted.");
    await session.channel.whenIdle();
    // A second Ctrl-C right after the one that cancelled the turn leaves.
    terminal.input.write("\x03");
    await session.running;
    assert.match(terminal.text(), /Bye\./);
  });
});
