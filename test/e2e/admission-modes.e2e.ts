/**
 * The `collect` and `interrupt` admission modes on the installed `bub gateway`, against the
 * fake Bot API and a fake model whose first call is slow: messages collected during a turn
 * become one follow-up turn holding them in order; a new message interrupts the running turn
 * (saved on the tape as interrupted, naming the new message) and only it is answered.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { freePort } from "../support/ports.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { onlyTape, pollUntil, startBub, within, type LiveBub, type TapeEntry } from "./support/live.ts";

/** The text of each user message the model was sent, newest last. */
function userTexts(messages: Record<string, unknown>[]): string[] {
  return messages.filter((message) => message.role === "user").map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
}

function events(entries: TapeEntry[], name: string): TapeEntry[] {
  return entries.filter((entry) => entry.kind === "event" && entry.payload.name === name);
}

describe("admission modes collect and interrupt (installed gateway, fake Bot API)", () => {
  const fx = useGatewayFixture();
  /** The gateway's log file so far (INFO and up: admission decisions are there, not on the terminal). */
  const gatewayLog = () => readFile(join(fx.bubHome, "logs", "bub.log"), "utf8").catch(() => "");

  it("collect: three messages sent during a running turn give exactly one follow-up turn holding all three in order", async () => {
    const gate = Promise.withResolvers<void>();
    fx.openai.script(reply.text("First answer.", { waitFor: gate.promise }), reply.text("Collected answer."));
    const live = await fx.start({ BUB_ADMISSION: "collect" });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "start a long task" });
    await within(fx.openai.waitForRequest(0), 15_000, "the first model call");
    // One at a time, each collected before the next is sent (a burst may arrive as one debounced message).
    for (const [index, text] of ["alpha note", "beta note", "gamma note"].entries()) {
      fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text });
      await pollUntil(async () => (new RegExp(`admission collect session_id=telegram:${ALICE} collected=${index + 1}\\b`).test(await gatewayLog()) ? true : undefined), `message ${index + 1} collected`);
    }
    gate.resolve();
    const sent = await within(fx.telegram.waitForCalls("sendMessage", 2), 15_000, "both replies");
    assert.deepEqual(sent.map((call) => call.payload.text), ["First answer.", "Collected answer."]);
    await fx.stop(live);
    assert.equal(fx.openai.requests.length, 2, "one turn for the first message, one for the three collected");
    const last = userTexts(fx.openai.requests[1]!.body.messages).at(-1) ?? "";
    const positions = ["alpha note", "beta note", "gamma note"].map((text) => last.indexOf(text));
    assert.ok(positions.every((position) => position >= 0), `all three in one prompt:\n${last}`);
    assert.deepEqual([...positions].sort((a, b) => a - b), positions, "in the order they were sent");
    assert.equal(fx.telegram.callsOf("sendMessage").length, 2);
  });

  it("interrupt: a second message cancels the first turn (saved as interrupted) and only the second is answered", async () => {
    fx.openai.script(reply.hang(), reply.text("Fresh answer."));
    const live = await fx.start({ BUB_ADMISSION: "interrupt" });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "write me a long essay" });
    await within(fx.openai.waitForRequest(0), 15_000, "the first model call");
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "actually, just say hi" });
    const [answer] = await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the reply to the second message");
    assert.equal(answer!.payload.text, "Fresh answer.");
    await fx.stop(live);
    assert.deepEqual(fx.telegram.callsOf("sendMessage").map((call) => call.payload.text), ["Fresh answer."], "nothing from the interrupted turn, no error message");
    assert.doesNotMatch(live.stderr(), /ERROR|WARN/, "a turn a newer message interrupted is no failure");
    assert.equal(fx.openai.requests.length, 2);
    assert.match(userTexts(fx.openai.requests[1]!.body.messages).at(-1) ?? "", /actually, just say hi/);

    const entries = await onlyTape(fx.bubHome);
    const users = entries.filter((entry) => entry.kind === "message" && entry.payload.role === "user");
    const first = users.findIndex((entry) => /write me a long essay/.test(String(entry.payload.content)));
    const second = users.findIndex((entry) => /actually, just say hi/.test(String(entry.payload.content)));
    assert.ok(first >= 0 && second > first, "both prompts are on the tape, in order");
    const interrupted = events(entries, "interrupted");
    assert.equal(interrupted.length, 1);
    const data = interrupted[0]!.payload.data as Record<string, unknown>;
    assert.match(String(data.reason), /^interrupted by a newer message in telegram:7: .*actually, just say hi/);
    assert.equal(data.signal, null);
    const at = entries.indexOf(interrupted[0]!);
    assert.ok(at > entries.indexOf(users[first]!) && at < entries.indexOf(users[second]!), "the interrupted event closes the first turn before the second begins");
    assert.ok(entries.some((entry) => entry.kind === "message" && entry.payload.role === "assistant" && entry.payload.content === "Fresh answer."));
    assert.ok(!entries.some((entry) => entry.kind === "message" && entry.payload.role === "assistant" && entries.indexOf(entry) < at), "the first turn has no answer");
  });

  for (const policy of ["collect", "interrupt"]) {
    it(`refuses BUB_ADMISSION=${policy} with the shared PostgreSQL queue, in one line`, async () => {
      const result = await runBub(["gateway"], { home: fx.home, env: fx.env({ BUB_ADMISSION: policy, BUB_DATABASE_URL: "postgres://bub:secret@127.0.0.1:9/bub" }), timeoutMs: 15_000 });
      assert.equal(result.code, 1, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.equal(result.stderr.trim().split("\n").length, 1, `one line:\n${result.stderr}`);
      assert.match(result.stderr, new RegExp(`^bub: BUB_ADMISSION=${policy} does not work with the shared inbound queue \\(BUB_DATABASE_URL\\) — `));
      assert.equal(fx.telegram.callsOf("getUpdates").length, 0, "it never polls");
    });
  }
});

/** A plugin channel `hook`: POST a text to it (answered once the message is admitted); replies are printed on stdout. */
const HOOK_CHANNEL = `import { createServer } from "node:http";

class HookChannel {
  name = "hook";
  needsDebounce = false;
  server = null;
  constructor(handler) {
    this.handler = handler;
  }
  async start(signal) {
    this.server = createServer(async (request, response) => {
      let body = "";
      for await (const chunk of request) body += chunk;
      await this.handler({ channel: "hook", chatId: "h", sessionId: "hook:h", content: body });
      response.end("admitted\\n");
    });
    await new Promise((resolve) => this.server.listen(Number(process.env.HOOK_PORT), "127.0.0.1", resolve));
    signal.addEventListener("abort", () => this.server.close(), { once: true });
  }
  async stop() {
    this.server?.close();
  }
  async send(message) {
    process.stdout.write("reply: " + message.content + "\\n");
  }
}

export default { name: "hook-channel", provideChannels: ({ messageHandler }) => [new HookChannel(messageHandler)] };
`;

describe("admission modes collect and interrupt on a plugin channel (installed gateway)", () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let live: LiveBub | null = null;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    home = await tempHome();
    // The plugin lives next to the workspace, not in it (a path inside an untrusted workspace is skipped).
    await mkdir(join(home.path, "ws"));
    await writeFile(join(home.path, "hook-channel.ts"), HOOK_CHANNEL);
  });
  afterEach(async () => {
    live?.kill();
    live = null;
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  /** Starts the gateway with the hook channel and `admission`; returns a function that POSTs a text and resolves once it was admitted. */
  async function startHook(admission: string): Promise<(text: string) => Promise<void>> {
    const port = await freePort();
    const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_PLUGINS: join(home.path, "hook-channel.ts"), HOOK_PORT: String(port), BUB_ADMISSION: admission };
    live = await startBub(["gateway", "--enable-channel", "hook"], { home: home.path, cwd: join(home.path, "ws"), env });
    const post = async (text: string) => {
      const response = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: text });
      assert.equal(await response.text(), "admitted\n");
    };
    // The first POST that connects is the probe turn ("ping"); the ones refused before it never reached bub.
    await pollUntil(() => post("ping").then(() => true, () => undefined), "the hook channel to listen", { intervalMs: 100 });
    return post;
  }

  it("collect: the messages sent during a turn run as one turn, in order", async () => {
    const gate = Promise.withResolvers<void>();
    // The probe message is a turn too: answered at once.
    openai.script(reply.text("probe"), reply.text("First.", { waitFor: gate.promise }), reply.text("All three."));
    const post = await startHook("collect");
    await live!.waitForStdout(/^reply: probe$/m);
    await post("first");
    await within(openai.waitForRequest(1), 15_000, "the first model call");
    for (const text of ["one", "two", "three"]) await post(text);
    gate.resolve();
    await live!.waitForStdout(/^reply: All three\.$/m);
    live!.child.kill("SIGTERM");
    assert.equal((await live!.exited(10_000)).code, 0);
    assert.equal(openai.requests.length, 3);
    assert.match(userTexts(openai.requests[2]!.body.messages).at(-1) ?? "", /one\ntwo\nthree/);
    assert.deepEqual(live!.stdout().split("\n").filter((line) => line.startsWith("reply: ")), ["reply: probe", "reply: First.", "reply: All three."]);
  });

  it("interrupt: a new message cancels the running turn and only it is answered", async () => {
    openai.script(reply.text("probe"), reply.hang(), reply.text("Only this."));
    const post = await startHook("interrupt");
    await live!.waitForStdout(/^reply: probe$/m);
    await post("a slow one");
    await within(openai.waitForRequest(1), 15_000, "the first model call");
    await post("never mind");
    await live!.waitForStdout(/^reply: Only this\.$/m);
    live!.child.kill("SIGTERM");
    assert.equal((await live!.exited(10_000)).code, 0);
    assert.deepEqual(live!.stdout().split("\n").filter((line) => line.startsWith("reply: ")), ["reply: probe", "reply: Only this."]);
    const interrupted = events(await onlyTape(join(home.path, ".bub")), "interrupted");
    assert.equal(interrupted.length, 1);
    assert.match(String((interrupted[0]!.payload.data as Record<string, unknown>).reason), /^interrupted by a newer message in hook:h: never mind$/);
  });
});
