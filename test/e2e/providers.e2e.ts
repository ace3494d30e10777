/**
 * `bub run` through every provider path of the installed binary, each against a fake server
 * on 127.0.0.1: an OpenAI-compatible server (`BUB_API_BASE`), the `openai:` provider (chat
 * completions with a base URL, the Responses API without one), Anthropic Messages, and
 * OpenRouter.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { anthropicReply, startFakeAnthropic, type AnthropicBlock, type FakeAnthropic } from "../support/fake-anthropic.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import type { ResponsesBody, ResponsesInputItem } from "../support/fake-openai-responses.ts";
import { installedPackage, runBub, tempHome, type BubResult } from "./support/installed.ts";
import { onlyTape, type TapeEntry } from "./support/live.ts";

const NOTES = "- water the plants\n- call Ada about the release\n";

/** A fresh HOME with `notes.txt` in it (the workspace) and BUB_HOME below it. */
async function workspace(): Promise<{ path: string; bubHome: string; cleanup: () => Promise<void> }> {
  const home = await tempHome();
  await writeFile(join(home.path, "notes.txt"), NOTES);
  return { ...home, bubHome: join(home.path, ".bub") };
}

function run(home: { path: string; bubHome: string }, message: string, env: Record<string, string>): Promise<BubResult> {
  return runBub(["run", message], { home: home.path, env: { BUB_HOME: home.bubHome, ...env } });
}

function assertAnswer(result: BubResult, answer: string): void {
  assert.equal(result.code, 0, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  assert.equal(result.stdout, `[cli:local]\n${answer}\n`);
}

/** The tape holds the prompt, the answer, tool entries as expected, and an ok `run` event with the model. */
function assertTape(entries: TapeEntry[], options: { prompt: string; answer: string; model: string; toolCalls?: number }): void {
  assert.ok(entries.length > 0, "the tape has entries");
  assert.deepEqual(
    entries.map((entry) => entry.id),
    entries.map((_entry, index) => index + 1),
    "ids count from 1",
  );
  const messages = entries.filter((entry) => entry.kind === "message").map((entry) => entry.payload);
  // The builtin prompt puts the message's context and date above the text.
  assert.ok(messages.some((payload) => payload.role === "user" && String(payload.content).endsWith(`---\n${options.prompt}`)), "the prompt is on the tape");
  assert.ok(messages.some((payload) => payload.role === "assistant" && payload.content === options.answer), "the answer is on the tape");
  assert.equal(entries.filter((entry) => entry.kind === "tool_call").length, options.toolCalls ?? 0);
  assert.equal(entries.filter((entry) => entry.kind === "tool_result").length, options.toolCalls ?? 0);
  const runs = entries.filter((entry) => entry.kind === "event" && entry.payload.name === "run").map((entry) => entry.payload.data as Record<string, unknown>);
  assert.equal(runs.length, (options.toolCalls ?? 0) + 1, "one run event per model call");
  for (const data of runs) {
    assert.equal(data.status, "ok");
    assert.equal(data.model, options.model);
  }
  assert.equal(entries.filter((entry) => entry.kind === "error").length, 0);
}

/** The text of an OpenAI chat `tool` message or of an Anthropic `tool_result` block. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => textOf((part as { text?: unknown }).text ?? part)).join("");
  return JSON.stringify(content);
}

describe("bub run against each provider (installed package, fake servers)", () => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let home: Awaited<ReturnType<typeof workspace>>;
  before(async () => {
    await installedPackage();
    [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic({ apiKey: "sk-ant-e2e" })]);
  });
  after(async () => {
    await Promise.all([openai.close(), anthropic.close()]);
  });
  beforeEach(async () => {
    openai.requests.length = 0;
    anthropic.requests.length = 0;
    home = await workspace();
  });
  afterEach(async () => {
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted OpenAI reply was used");
    assert.equal(anthropic.pending(), 0, "every scripted Anthropic reply was used");
  });

  describe("an OpenAI-compatible server through BUB_API_BASE (local:any)", () => {
    const env = () => ({ BUB_MODEL: "local:any", BUB_API_BASE: openai.url });

    it("prints the answer and writes the tape", async () => {
      openai.script(reply.text("Hello from the local model."));
      const result = await run(home, "hi there", env());
      assertAnswer(result, "Hello from the local model.");
      assert.equal(openai.requests.length, 1);
      const [request] = openai.requests;
      assert.equal(request!.path, "/v1/chat/completions");
      assert.equal(request!.body.model, "any");
      assert.equal(request!.body.stream, true);
      assert.equal(request!.headers.authorization, undefined, "no key configured, none sent");
      const last = request!.body.messages.at(-1)!;
      assert.equal(last.role, "user");
      assert.match(String(last.content), /^sender_id=human\|channel=\$cli\|chat_id=local\n---Date: [^\n]+---\nhi there$/);
      assert.equal(request!.body.messages[0]!.role, "system");
      assertTape(await onlyTape(home.bubHome), { prompt: "hi there", answer: "Hello from the local model.", model: "local:any" });
    });

    it("runs the fs.read tool the model asks for and sends its result back", async () => {
      openai.script(
        reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: JSON.stringify({ path: "notes.txt" }) }]),
        (request) => {
          const tool = request.body.messages.find((message) => message.role === "tool");
          return reply.text(tool && textOf(tool.content).includes("water the plants") ? "Water the plants, then call Ada." : "I could not read it.");
        },
      );
      const result = await run(home, "what is on my list?", { ...env(), BUB_API_KEY: "sk-local" });
      assertAnswer(result, "Water the plants, then call Ada.");
      assert.equal(openai.requests.length, 2);
      assert.ok(openai.requests[0]!.body.tools?.some((tool) => tool.function.name === "fs_read"), "fs_read is offered");
      assert.equal(openai.requests[0]!.headers.authorization, "Bearer sk-local");
      const second = openai.requests[1]!.body.messages;
      const call = second.find((message) => message.role === "assistant" && Array.isArray(message.tool_calls)) as { tool_calls: { id: string; function: { name: string } }[] } | undefined;
      assert.equal(call?.tool_calls[0]?.id, "call_notes");
      assert.equal(call?.tool_calls[0]?.function.name, "fs_read");
      const tool = second.find((message) => message.role === "tool");
      assert.equal(tool?.tool_call_id, "call_notes");
      assert.ok(textOf(tool?.content).includes("call Ada about the release"), textOf(tool?.content));
      const entries = await onlyTape(home.bubHome);
      assertTape(entries, { prompt: "what is on my list?", answer: "Water the plants, then call Ada.", model: "local:any", toolCalls: 1 });
      const results = entries.find((entry) => entry.kind === "tool_result")!.payload.results as unknown[];
      assert.ok(JSON.stringify(results).includes("water the plants"));
    });
  });

  describe("the openai: provider", () => {
    it("uses chat completions when BUB_OPENAI_API_BASE names a server", async () => {
      openai.script(reply.text("Chat completions it is."));
      const result = await run(home, "hello", { BUB_MODEL: "openai:gpt-4o-mini", BUB_OPENAI_API_BASE: openai.url, BUB_OPENAI_API_KEY: "sk-openai" });
      assertAnswer(result, "Chat completions it is.");
      assert.equal(openai.requests[0]!.path, "/v1/chat/completions");
      assert.equal(openai.requests[0]!.body.model, "gpt-4o-mini");
      assert.equal(openai.requests[0]!.headers.authorization, "Bearer sk-openai");
      assertTape(await onlyTape(home.bubHome), { prompt: "hello", answer: "Chat completions it is.", model: "openai:gpt-4o-mini" });
    });

    // Without a BUB base URL the provider speaks OpenAI's Responses API; the SDK's own
    // OPENAI_BASE_URL points it at the fake server.
    const responsesEnv = () => ({ BUB_MODEL: "openai:gpt-4o-mini", OPENAI_API_KEY: "sk-responses", OPENAI_BASE_URL: openai.url });

    it("uses the Responses API otherwise: a plain answer", async () => {
      openai.script(reply.text("Responses it is."));
      const result = await run(home, "hello", responsesEnv());
      assertAnswer(result, "Responses it is.");
      const [request] = openai.requests;
      assert.equal(request!.path, "/v1/responses");
      assert.equal(request!.headers.authorization, "Bearer sk-responses");
      const body = request!.body as unknown as ResponsesBody;
      assert.equal(body.model, "gpt-4o-mini");
      assert.equal(body.stream, true);
      assert.ok(JSON.stringify(body.input).includes("hello"));
      assertTape(await onlyTape(home.bubHome), { prompt: "hello", answer: "Responses it is.", model: "openai:gpt-4o-mini" });
    });

    it("uses the Responses API otherwise: a function call and its output", async () => {
      openai.script(reply.toolCalls([{ id: "call_resp", name: "fs_read", arguments: JSON.stringify({ path: "notes.txt" }) }], { text: "Reading your notes." }), reply.text("Two things: plants and Ada."));
      const result = await run(home, "what is on my list?", responsesEnv());
      assertAnswer(result, "Reading your notes.\n\nTwo things: plants and Ada.");
      assert.equal(openai.requests.length, 2);
      const input = (openai.requests[1]!.body as unknown as ResponsesBody).input as ResponsesInputItem[];
      assert.equal(input.find((item) => item.type === "function_call")?.call_id, "call_resp");
      const output = input.find((item) => item.type === "function_call_output");
      assert.equal(output?.call_id, "call_resp");
      assert.ok(textOf(output?.output).includes("water the plants"), JSON.stringify(output));
      assertTape(await onlyTape(home.bubHome), { prompt: "what is on my list?", answer: "Two things: plants and Ada.", model: "openai:gpt-4o-mini", toolCalls: 1 });
    });
  });

  describe("the anthropic: provider (Messages API)", () => {
    const env = () => ({ BUB_MODEL: "anthropic:claude-test-4-5", BUB_ANTHROPIC_API_BASE: anthropic.url, BUB_ANTHROPIC_API_KEY: "sk-ant-e2e" });

    it("prints the answer and writes the tape", async () => {
      anthropic.script(anthropicReply.text("Hello from Claude.", { thinking: "a greeting" }));
      const result = await run(home, "hi there", env());
      assertAnswer(result, "Hello from Claude.");
      const [request] = anthropic.requests;
      assert.equal(request!.path, "/v1/messages");
      assert.equal(request!.headers["x-api-key"], "sk-ant-e2e");
      assert.equal(request!.body.model, "claude-test-4-5");
      assert.equal(request!.body.stream, true);
      assert.equal(typeof request!.body.max_tokens, "number");
      assert.ok(Array.isArray(request!.body.system) && request!.body.system.length > 0, "the system prompt is sent as blocks");
      assert.ok(request!.body.system.some((block) => block.cache_control), "the system prompt is a cache breakpoint");
      const last = request!.body.messages.at(-1)!;
      assert.equal(last.role, "user");
      assert.ok(textOf(last.content).includes("hi there"));
      assertTape(await onlyTape(home.bubHome), { prompt: "hi there", answer: "Hello from Claude.", model: "anthropic:claude-test-4-5" });
    });

    it("runs the bash tool the model asks for and sends its tool_result back", async () => {
      anthropic.script(anthropicReply.toolUse([{ id: "toolu_e2e", name: "bash", input: JSON.stringify({ cmd: "wc -l notes.txt" }) }], { text: "Counting." }), (request) => {
        const blocks = request.body.messages.flatMap((message) => (Array.isArray(message.content) ? message.content : []));
        const result = blocks.find((block: AnthropicBlock) => block.type === "tool_result");
        return anthropicReply.text(result && textOf(result.content).includes("2 notes.txt") ? "There are 2 lines." : `unexpected: ${JSON.stringify(result)}`);
      });
      const result = await run(home, "how many lines in notes.txt?", env());
      assertAnswer(result, "Counting.\n\nThere are 2 lines.");
      assert.equal(anthropic.requests.length, 2);
      assert.ok(anthropic.requests[0]!.body.tools?.some((tool) => tool.name === "bash"), "bash is offered");
      const messages = anthropic.requests[1]!.body.messages;
      const use = messages.flatMap((message) => (Array.isArray(message.content) ? message.content : [])).find((block) => block.type === "tool_use");
      assert.deepEqual(use?.input, { cmd: "wc -l notes.txt" });
      assertTape(await onlyTape(home.bubHome), { prompt: "how many lines in notes.txt?", answer: "There are 2 lines.", model: "anthropic:claude-test-4-5", toolCalls: 1 });
    });
  });

  describe("failures", () => {
    it("retries an overloaded Anthropic (529, retry-after 0) and answers, exit 0", async () => {
      anthropic.script(anthropicReply.error(529, "Overloaded", { retryAfter: 0 }), anthropicReply.text("Second time lucky."));
      const result = await run(home, "hi", { BUB_MODEL: "anthropic:claude-test", BUB_ANTHROPIC_API_BASE: anthropic.url, BUB_ANTHROPIC_API_KEY: "sk-ant-e2e" });
      assertAnswer(result, "Second time lucky.");
      assert.equal(anthropic.requests.length, 2);
    });

    it("reports a refused key as the turn's error, exit 1, and keeps the key off the tape", async () => {
      openai.script(reply.error(401, "Incorrect API key provided", { type: "invalid_request_error", code: "invalid_api_key" }));
      const result = await run(home, "hi", { BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_API_KEY: "sk-secret-e2e" });
      assert.equal(result.code, 1, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /^bub: local:any returned HTTP 401: Incorrect API key provided — check the API key \(BUB_LOCAL_API_KEY or BUB_API_KEY\)\n$/);
      assert.equal(openai.requests.length, 1, "a 401 is not retried");
      const entries = await onlyTape(home.bubHome);
      assert.ok(entries.some((entry) => entry.kind === "error"), "the failure is on the tape");
      const runs = entries.filter((entry) => entry.kind === "event" && entry.payload.name === "run");
      assert.equal((runs.at(-1)?.payload.data as { status?: string } | undefined)?.status, "error");
      assert.doesNotMatch(JSON.stringify(entries) + result.stdout + result.stderr, /sk-secret-e2e/);
    });
  });

  describe("the openrouter: provider", () => {
    it("prints the answer from the server BUB_OPENROUTER_API_BASE names", async () => {
      openai.script(reply.text("Hello via OpenRouter."));
      const result = await run(home, "hi", { BUB_MODEL: "openrouter:openrouter/free", BUB_OPENROUTER_API_BASE: openai.url, BUB_OPENROUTER_API_KEY: "sk-or-e2e" });
      assertAnswer(result, "Hello via OpenRouter.");
      const [request] = openai.requests;
      assert.equal(request!.path, "/v1/chat/completions");
      assert.equal(request!.body.model, "openrouter/free");
      assert.equal(request!.headers.authorization, "Bearer sk-or-e2e");
      assertTape(await onlyTape(home.bubHome), { prompt: "hi", answer: "Hello via OpenRouter.", model: "openrouter:openrouter/free" });
    });

    it("needs no key for a server of its own, like openai: and anthropic:", async () => {
      openai.script(reply.text("No key needed."));
      const result = await run(home, "hi", { BUB_MODEL: "openrouter:openrouter/free", BUB_OPENROUTER_API_BASE: openai.url });
      assertAnswer(result, "No key needed.");
    });
  });
});
