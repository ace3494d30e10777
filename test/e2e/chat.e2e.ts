/**
 * `bub chat` of the installed binary with piped stdin (plain output, no terminal), against
 * fake model servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { anthropicReply, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { pollUntil, readTapes, startBub, type LiveBub, type TapeEntry } from "./support/live.ts";

/** How many turns of the session tapes under `bubHome` have ended (`loop.step` ok events). */
async function finishedTurns(bubHome: string): Promise<number> {
  const entries: TapeEntry[] = [...(await readTapes(bubHome)).values()].flat();
  return entries.filter((entry) => entry.kind === "event" && entry.payload.name === "loop.step" && (entry.payload.data as { status?: string } | undefined)?.status === "ok").length;
}

/** The user text of a prompt after the context header bub puts above it. */
function promptText(content: unknown): string {
  const text = typeof content === "string" ? content : JSON.stringify(content);
  return text.slice(text.lastIndexOf("---\n") + 4);
}

describe("bub chat with piped stdin (installed package)", () => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let bubHome: string;
  let bub: LiveBub | null = null;
  before(async () => {
    await installedPackage();
    [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  });
  after(() => Promise.all([openai.close(), anthropic.close()]));
  beforeEach(async () => {
    openai.requests.length = 0;
    anthropic.requests.length = 0;
    home = await tempHome();
    bubHome = join(home.path, ".bub");
  });
  afterEach(async () => {
    bub?.kill();
    bub = null;
    await home.cleanup();
    assert.equal(openai.pending() + anthropic.pending(), 0, "every scripted reply was used");
  });

  /**
   * Sends `first`, waits until its turn has ended (its answer printed and its entries on the
   * tape), sends `second`, closes stdin, and returns what the chat printed.
   */
  async function twoTurns(env: Record<string, string>, first: { line: string; answer: string }, second: { line: string; answer: string }) {
    bub = await startBub(["chat"], { home: home.path, env: { BUB_HOME: bubHome, ...env } });
    bub.child.stdin.write(`${first.line}\n`);
    await bub.waitForStdout(new RegExp(`${first.answer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n`));
    // Piped input gives no prompt: the end of the turn's model loop shows on the tape only.
    await pollUntil(async () => ((await finishedTurns(bubHome)) >= 1 ? true : undefined), "the first turn on the tape");
    bub.child.stdin.end(`${second.line}\n`);
    const result = await bub.exited();
    assert.equal(result.code, 0, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    assert.equal(result.stderr, "");
    const first_ = result.stdout.indexOf(first.answer);
    const second_ = result.stdout.indexOf(second.answer);
    assert.ok(first_ >= 0 && second_ > first_, `both answers, in order:\n${result.stdout}`);
    assert.match(result.stdout, /\nBye\.\n$/);
    assert.equal(await finishedTurns(bubHome), 2, "two turns on the tape");
    return result;
  }

  it("answers two lines as two turns in order, the second with the first in context, then leaves at EOF (OpenAI-compatible)", async () => {
    openai.script(reply.text("The first answer."), reply.text("The second answer."));
    const result = await twoTurns({ BUB_MODEL: "local:any", BUB_API_BASE: openai.url }, { line: "first question", answer: "The first answer." }, { line: "second question", answer: "The second answer." });
    assert.match(result.stdout, /^Bub\nworkspace: .+\nmodel: local:any\n/);
    assert.doesNotMatch(result.stdout, /\u001b\[/, "no escape sequences when stdout is not a terminal");
    assert.equal(openai.requests.length, 2);
    const [one, two] = openai.requests.map((request) => request.body.messages.filter((message) => message.role !== "system"));
    assert.deepEqual(
      one!.map((message) => [message.role, promptText(message.content)]),
      [["user", "first question"]],
    );
    assert.deepEqual(
      two!.map((message) => [message.role, message.role === "user" ? promptText(message.content) : message.content]),
      [
        ["user", "first question"],
        ["assistant", "The first answer."],
        ["user", "second question"],
      ],
    );
  });

  it("answers two lines as two turns against Anthropic, a valid Messages conversation each time", async () => {
    anthropic.script(anthropicReply.text("Claude one."), anthropicReply.text("Claude two."));
    await twoTurns({ BUB_MODEL: "anthropic:claude-test", BUB_ANTHROPIC_API_BASE: anthropic.url, BUB_ANTHROPIC_API_KEY: "sk-ant" }, { line: "hello", answer: "Claude one." }, { line: "again", answer: "Claude two." });
    assert.equal(anthropic.requests.length, 2);
    const roles = anthropic.requests[1]!.body.messages.map((message) => message.role);
    assert.deepEqual(roles, ["user", "assistant", "user"]);
  });

  it("lines piped at once are separate turns, answered in the order they came; exit 0 at EOF", async () => {
    openai.script(reply.text("First answered."), reply.text("Second answered."), reply.text("Third answered."));
    const input = "first question\nsecond question\nthird question\n";
    const result = await runBub(["chat"], { home: home.path, input, env: { BUB_HOME: bubHome, BUB_MODEL: "local:any", BUB_API_BASE: openai.url } });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /steering/);
    assert.match(result.stdout, /First answered\.\nSecond answered\.\nThird answered\.\nBye\.\n$/);
    assert.equal(openai.requests.length, 3);
    const lastUsers = openai.requests.map((request) => promptText(request.body.messages.filter((message) => message.role === "user").at(-1)!.content));
    assert.deepEqual(lastUsers, ["first question", "second question", "third question"]);
  });

  it("leaves at once with exit 0 when stdin is empty", async () => {
    const result = await runBub(["chat"], { home: home.path, env: { BUB_HOME: bubHome, BUB_MODEL: "local:any", BUB_API_BASE: openai.url } });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Bye\.\n$/);
    assert.equal(openai.requests.length, 0);
  });
});
