// Messages a user can act on when the model's server misbehaves: a malformed event stream
// fails the step with one line naming provider and model; a context overflow that survives
// the automatic handoff ends with what to do; a stream cut midway keeps its partial text on
// the tape, marked incomplete, and is made once more when only reasoning had streamed.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createBub } from "../../src/builtin/create.ts";
import { classifyModelError } from "../../src/llm/errors.ts";
import { chatRecordEntries } from "../../src/tape/tape.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { tempDir } from "../support/temp.ts";
import { failure, hello, useModelClientServer } from "./model-client-support.ts";

describe("a malformed event stream", () => {
  const { server, clientFor } = useModelClientServer();

  it("fails with one line naming provider and model, after the text already streamed, and is not retried", async () => {
    server.script(reply.malformed(2, "one two three"));
    const { client, sleeps } = clientFor({ fallback_models: ["fake:model-b"] });
    const { events, error } = await failure(client.stream(hello));
    assert.deepEqual(events.map((event) => (event.type === "text" ? event.delta : event.type)), ["one "]);
    assert.equal(error.kind, "provider");
    assert.equal(error.message, "fake:model-a: the server sent a malformed event stream (provider fake, model model-a)");
    assert.equal(error.toString().split("\n").length, 1, "one line");
    assert.equal(error.details?.malformed_stream, true);
    assert.match(String(error.details?.parse_error), /JSON parsing failed/, "the parser's words stay in the details");
    assert.doesNotMatch(String(error.details?.parse_error), /\n/);
    assert.deepEqual(sleeps, []);
    assert.equal(server.requests.length, 1);
  });

  it("moves to the fallback model when the very first event is broken", async () => {
    server.script(reply.malformed(0), reply.text("fallback answer"));
    const { client } = clientFor({ fallback_models: ["fake:model-b"] });
    const events = [];
    for await (const event of client.stream(hello)) events.push(event);
    assert.equal(server.requests.at(-1)!.body.model, "model-b", "a candidate that sent nothing usable falls back");
  });

  it("classifies a model id without a provider too", () => {
    const broken = Object.assign(new Error("JSON parsing failed: Text: {.\nError message: bad"), { name: "AI_JSONParseError", [Symbol.for("vercel.ai.error.AI_JSONParseError")]: true });
    assert.equal(classifyModelError(broken, "solo").message, "solo: the server sent a malformed event stream");
  });
});

describe("a context overflow that persists after the automatic handoff", () => {
  const server = useFakeOpenAI();

  it("ends the turn with what happened and what to do, not the provider's raw 400", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const framework = await createBub({ workspace: dir.path, home, env: { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "k", BUB_HOME: home } });
      const sent: string[] = [];
      framework.runtime.register({ name: "channel", dispatchOutbound: ({ message }) => (sent.push(message.content), true) }, "channel");
      server.script(reply.contextLength(), reply.contextLength());
      await framework.running(() => framework.processInbound({ session_id: "telegram:1", channel: "telegram", chat_id: "1", content: "a very long message" }));
      assert.equal(server.requests.length, 2, "one automatic handoff, then the retry");
      const errors = sent.filter((content) => content.startsWith("An error occurred"));
      assert.equal(errors.length, 1);
      assert.match(errors[0]!, /^An error occurred at stage 'run_model': \[provider\] The prompt does not fit the context window of fake:any, even after the automatic handoff/);
      assert.match(errors[0]!, /start a new session/);
      assert.match(errors[0]!, /larger context/);
      assert.doesNotMatch(errors[0]!, /HTTP 400|maximum context length/);
      const tape = await tapeText(home);
      assert.match(tape, /auto_handoff\/context_overflow/);
      assert.match(tape, /"after_auto_handoff":true/);
      assert.match(tape, /"provider_message":"fake:any returned HTTP 400: This model's maximum context length/, "the raw message stays in the details");
    } finally {
      await dir.cleanup();
    }
  });
});

describe("a stream cut midway", () => {
  const server = useFakeOpenAI();

  async function turns(contents: string[]): Promise<{ outputs: string[]; errors: string[]; tape: Record<string, unknown>[] }> {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const framework = await createBub({ workspace: dir.path, home, env: { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "k", BUB_HOME: home } });
      const errors: string[] = [];
      framework.runtime.register({ name: "channel", dispatchOutbound: ({ message }) => (message.kind === "error" && errors.push(message.content), true) }, "channel");
      const outputs: string[] = [];
      for (const content of contents) outputs.push((await framework.running(() => framework.processInbound({ session_id: "s", content }))).modelOutput);
      const tape = (await tapeText(home)).split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
      return { outputs, errors, tape };
    } finally {
      await dir.cleanup();
    }
  }

  it("keeps the partial text on the tape marked incomplete, says so, and sends it as context next time", async () => {
    server.script(reply.drop(3, "one two three four five"), reply.text("fine"));
    const { outputs, errors, tape } = await turns(["tell me", "go on"]);
    assert.deepEqual(outputs, ["one two ", "fine"]);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /fake:any: the response stream was cut midway \(the connection failed: [^)]+\); the partial answer is kept on the tape, marked incomplete\.$/);
    const partial = tape.find((entry) => entry.kind === "message" && (entry.payload as { role: string }).role === "assistant");
    assert.deepEqual(partial?.payload, { role: "assistant", content: "one two " });
    assert.equal((partial?.meta as { incomplete?: boolean }).incomplete, true);
    assert.equal(server.requests.length, 2, "text had been shown: not retried");
    const context = server.requests[1]!.body.messages.filter((message) => message.role !== "system").map((message) => message.role);
    assert.deepEqual(context, ["user", "assistant", "user"]);
  });

  it("marks the partial answer in a step record's entries", () => {
    const record = { runId: "r", systemPrompt: null, contextError: null, newMessages: [], toolCalls: null, toolResults: null, error: null, responseText: "half", usage: null, provider: null, model: null };
    const [message] = chatRecordEntries({ ...record, incomplete: true });
    assert.deepEqual({ kind: message!.kind, payload: message!.payload, meta: message!.meta }, { kind: "message", payload: { role: "assistant", content: "half" }, meta: { run_id: "r", incomplete: true } });
    assert.deepEqual(chatRecordEntries(record)[0]!.meta, { run_id: "r" });
  });

  it("makes the call once more when only reasoning had streamed", async () => {
    server.script({ kind: "stream", reasoning: "let me think about it", text: "the answer", dropAfterChunks: 2 }, reply.text("the answer"));
    const { outputs, errors, tape } = await turns(["question"]);
    assert.deepEqual(outputs, ["the answer"]);
    assert.deepEqual(errors, []);
    assert.equal(server.requests.length, 2);
    assert.ok(!JSON.stringify(tape).includes('"incomplete"'));
  });

  it("gives up after that one more call", async () => {
    const cut = { kind: "stream", reasoning: "let me think about it", text: "x", dropAfterChunks: 2 } as const;
    server.script(cut, cut);
    const { errors } = await turns(["question"]);
    assert.equal(server.requests.length, 2);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /the connection failed/);
  });
});

async function tapeText(home: string): Promise<string> {
  const dir = join(home, "tapes");
  return (await Promise.all((await readdir(dir)).filter((name) => name.endsWith(".jsonl")).map((name) => readFile(join(dir, name), "utf8")))).join("");
}
