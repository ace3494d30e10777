/**
 * `bub chat` input and model switching on the installed binary: a bracketed paste in a real
 * pseudo terminal (util-linux `script`), piped pastes and `\\` continuations, `,model` with a
 * wrong id, and `bub chat --model`.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { cleanEnv, installedPackage, runBub, tempHome } from "./support/installed.ts";
import { within } from "./support/live.ts";

const hasScript = spawnSync("script", ["--version"]).status === 0;

/** The user text of a prompt after the context header bub puts above it. */
function promptText(content: unknown): string {
  const text = typeof content === "string" ? content : JSON.stringify(content);
  return text.slice(text.lastIndexOf("---\n") + 4);
}

describe("bub chat input and models (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI({ models: ["small-model", "large-model"] });
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    home = await tempHome();
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:small-model", BUB_API_BASE: openai.url };
  });
  afterEach(async () => {
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  const userTexts = () => openai.requests.map((request) => promptText(request.body.messages.filter((message) => message.role === "user").at(-1)!.content));

  it("a bracketed paste of three lines in a terminal is one turn", { skip: hasScript ? false : "util-linux script is not installed" }, async () => {
    openai.script(reply.text("Pasted text read."));
    const { bin } = await installedPackage();
    const child = spawn("script", ["-q", "-e", "-c", `stty cols 100 rows 30; '${bin}' chat`, "/dev/null"], { cwd: home.path, env: cleanEnv(home.path, { ...env, TERM: "xterm" }), stdio: ["pipe", "pipe", "pipe"] });
    let screen = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (screen += chunk));
    const closed = once(child, "close");
    const waitFor = async (text: string) => {
      const deadline = Date.now() + 15_000;
      while (!screen.includes(text)) {
        if (Date.now() > deadline || child.exitCode !== null) assert.fail(`no '${text}' on the screen:\n${screen}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      await waitFor("\u001B[?2004h");
      await waitFor("> ");
      child.stdin.write("\u001B[200~first line\rsecond line\rthird line\u001B[201~");
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.stdin.write("\r");
      await waitFor("Pasted text read.");
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.stdin.write("\u0004");
      await within(closed, 15_000, "bub chat to leave on Ctrl-D");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    assert.equal(openai.requests.length, 1, `one turn for the paste:\n${screen}`);
    assert.deepEqual(userTexts(), ["first line\nsecond line\nthird line"]);
  });

  it("piped: a paste between markers and lines ending in \\ are one message each", async () => {
    openai.script(reply.text("Got the paste."), reply.text("Got the continued line."));
    const input = "\u001B[200~def f():\n    return 1\u001B[201~\nfirst part \\\nsecond part\n";
    const result = await runBub(["chat"], { home: home.path, input, env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Got the paste\.\nGot the continued line\.\nBye\.\n$/);
    assert.deepEqual(userTexts(), ["def f():\n    return 1", "first part \nsecond part"]);
  });

  it("a wrong ,model id is refused in one line and the next turn still uses the session's model", async () => {
    openai.script(reply.text("Answered by the large model."));
    const input = ",model local:large-model\n,model local:large-modle\nhello\n";
    const result = await runBub(["chat", "--session-id", "work"], { home: home.path, input, env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Session model set to local:large-model/);
    // Piped chat: the refusal is an error, so it is a `bub:` line on stderr.
    const refusal = result.stderr.split("\n").filter((line) => line.includes("Unknown model"));
    assert.equal(refusal.length, 1, result.stderr);
    assert.match(refusal[0]!, /^bub: /);
    assert.doesNotMatch(result.stdout, /Unknown model/);
    assert.match(refusal[0]!, /Unknown model 'large-modle' for provider 'local'; did you mean local:large-model, local:small-model\? The session model is unchanged/);
    assert.match(result.stdout, /Answered by the large model\./);
    assert.deepEqual(openai.requests.map((request) => request.body.model), ["large-model"]);
  });

  it("bub chat --model applies to that chat only; ,model shows it", async () => {
    openai.script(reply.text("From the large model."), reply.text("From the small model."));
    const first = await runBub(["chat", "--model", "local:large-model"], { home: home.path, input: ",model\nhi\n", env });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /model: local:large-model\n/);
    assert.match(first.stdout, /Current model: local:large-model\nFallback models: none/);
    const second = await runBub(["chat"], { home: home.path, input: "hi again\n", env });
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(openai.requests.map((request) => request.body.model), ["large-model", "small-model"], "the next chat is back on the configured model");
  });
});
