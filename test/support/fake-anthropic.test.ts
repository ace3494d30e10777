import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createAnthropic } from "@ai-sdk/anthropic";
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { anthropicReply, invalidRequest, startFakeAnthropic, type AnthropicMessagesBody, type FakeAnthropic } from "./fake-anthropic.ts";

const readTool: LanguageModelV4FunctionTool = {
  type: "function",
  name: "fs_read",
  description: "read a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

async function parts(model: LanguageModelV4, options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamPart[]> {
  const { stream } = await model.doStream(options);
  const out: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) out.push(part);
  return out;
}

const hello: LanguageModelV4Prompt = [
  { role: "system", content: "be brief" },
  { role: "user", content: [{ type: "text", text: "hello" }] },
];

describe("fake Anthropic Messages server (with the real @ai-sdk/anthropic client)", () => {
  let server: FakeAnthropic;
  let model: LanguageModelV4;
  before(async () => {
    server = await startFakeAnthropic({ apiKey: "sk-ant-test" });
    model = createAnthropic({ baseURL: server.url, apiKey: "sk-ant-test" })("claude-test-1");
  });
  after(() => server.close());
  beforeEach(() => {
    assert.equal(server.pending(), 0, "the previous test consumed its script");
    server.requests.length = 0;
  });

  it("listens on 127.0.0.1 with a /v1 base url", () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it("streams text deltas, then finish with the scripted usage and stop reason", async () => {
    server.script(anthropicReply.text("Hi there, friend", { thinking: "greet back", usage: { input_tokens: 12, output_tokens: 4, cache_read_input_tokens: 8 } }));
    const streamed = await parts(model, { prompt: hello, maxOutputTokens: 100 });
    const text = streamed.filter((part) => part.type === "text-delta").map((part) => part.delta);
    assert.deepEqual(text, ["Hi ", "there, ", "friend"]);
    assert.equal(streamed.filter((part) => part.type === "reasoning-delta").map((part) => part.delta).join(""), "greet back");
    const finish = streamed.find((part) => part.type === "finish");
    assert.ok(finish && finish.type === "finish");
    assert.equal(finish.finishReason.unified, "stop");
    assert.equal(finish.finishReason.raw, "end_turn");
    assert.equal(finish.usage.outputTokens.total, 4);
    assert.equal(finish.usage.inputTokens.cacheRead, 8);
    const [request] = server.requests;
    assert.equal(request!.path, "/v1/messages");
    assert.equal(request!.headers["x-api-key"], "sk-ant-test");
    assert.ok(request!.headers["anthropic-version"]);
    assert.equal(request!.body.stream, true);
    assert.equal(request!.body.max_tokens, 100);
    assert.equal(request!.body.model, "claude-test-1");
    assert.deepEqual(request!.body.system, [{ type: "text", text: "be brief" }]);
    assert.deepEqual(request!.body.messages, [{ role: "user", content: [{ type: "text", text: "hello" }] }]);
  });

  it("streams a tool_use block whose input_json_delta fragments join to the scripted input", async () => {
    server.script(anthropicReply.toolUse([{ id: "toolu_1", name: "fs_read", input: '{"path":"notes.txt"}' }], { text: "Let me look.", inputFragments: 4 }));
    const streamed = await parts(model, { prompt: hello, tools: [readTool] });
    const deltas = streamed.filter((part) => part.type === "tool-input-delta").map((part) => part.delta);
    assert.equal(deltas.join(""), '{"path":"notes.txt"}');
    assert.ok(deltas.length >= 4);
    const call = streamed.find((part) => part.type === "tool-call");
    assert.ok(call && call.type === "tool-call");
    assert.equal(call.toolCallId, "toolu_1");
    assert.equal(call.toolName, "fs_read");
    assert.deepEqual(JSON.parse(call.input), { path: "notes.txt" });
    const finish = streamed.find((part) => part.type === "finish");
    assert.ok(finish && finish.type === "finish");
    assert.equal(finish.finishReason.unified, "tool-calls");
    assert.equal(server.requests[0]!.body.tools?.[0]?.name, "fs_read");
  });

  it("records the tool_result of the next turn and accepts the conversation", async () => {
    server.script(anthropicReply.text("It says hi."));
    const prompt: LanguageModelV4Prompt = [
      ...hello,
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "toolu_1", toolName: "fs_read", input: { path: "notes.txt" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "toolu_1", toolName: "fs_read", output: { type: "text", value: "hi" } }] },
    ];
    const streamed = await parts(model, { prompt, tools: [readTool] });
    assert.equal(streamed.filter((part) => part.type === "text-delta").map((part) => part.delta).join(""), "It says hi.");
    const messages = server.requests[0]!.body.messages;
    assert.equal(messages.length, 3);
    const result = (messages[2]!.content as { type: string; tool_use_id?: string; content?: unknown }[])[0]!;
    assert.equal(result.type, "tool_result");
    assert.equal(result.tool_use_id, "toolu_1");
    assert.match(JSON.stringify(result.content), /hi/);
  });

  it("answers a non-streaming request with one message body", async () => {
    server.script(anthropicReply.toolUse([{ name: "fs_read", input: '{"path":"a"}' }], { text: "reading", usage: { input_tokens: 3, output_tokens: 2 } }));
    const result = await model.doGenerate({ prompt: hello, tools: [readTool] });
    assert.deepEqual(
      result.content.map((part) => part.type),
      ["text", "tool-call"],
    );
    const call = result.content[1]!;
    assert.ok(call.type === "tool-call");
    assert.equal(call.toolCallId, "toolu_fake_0");
    assert.deepEqual(JSON.parse(call.input), { path: "a" });
    assert.equal(result.finishReason.unified, "tool-calls");
    assert.equal(result.usage.inputTokens.total, 3);
    assert.notEqual(server.requests[0]!.body.stream, true);
  });

  it("sends scripted errors in the Anthropic error shape, with retry-after", async () => {
    server.script(anthropicReply.error(429, "slow down", { retryAfter: 7 }), anthropicReply.promptTooLong());
    const limited = await model.doStream({ prompt: hello }).then(
      () => assert.fail("429 should reject"),
      (error: { statusCode?: number; message: string; responseHeaders?: Record<string, string>; isRetryable?: boolean }) => error,
    );
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.message, "slow down");
    assert.equal(limited.responseHeaders?.["retry-after"], "7");
    assert.equal(limited.isRetryable, true);
    const tooLong = await model.doStream({ prompt: hello }).then(
      () => assert.fail("400 should reject"),
      (error: { statusCode?: number; message: string }) => error,
    );
    assert.equal(tooLong.statusCode, 400);
    assert.match(tooLong.message, /prompt is too long/);
  });

  it("reports an error event sent in the middle of the stream", async () => {
    server.script(anthropicReply.text("partial", { streamError: { type: "overloaded_error", message: "Overloaded" } }));
    const streamed = await parts(model, { prompt: hello });
    const error = streamed.find((part) => part.type === "error");
    assert.ok(error, JSON.stringify(streamed.map((part) => part.type)));
  });

  it("rejects a wrong key with 401 and a request that the real API would refuse with 400", async () => {
    const wrong = createAnthropic({ baseURL: server.url, apiKey: "nope" })("claude-test-1");
    await assert.rejects(async () => wrong.doStream({ prompt: hello }), (error: { statusCode?: number }) => error.statusCode === 401);
    const dangling: LanguageModelV4Prompt = [...hello, { role: "assistant", content: [{ type: "tool-call", toolCallId: "toolu_9", toolName: "fs_read", input: {} }] }, { role: "user", content: [{ type: "text", text: "and?" }] }];
    await assert.rejects(async () => model.doStream({ prompt: dangling, tools: [readTool] }), (error: { statusCode?: number; message: string }) => error.statusCode === 400 && /toolu_9/.test(error.message));
  });

  it("checks requests as the real API does", () => {
    const headers = { "anthropic-version": "2023-06-01" };
    const base: AnthropicMessagesBody = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
    assert.equal(invalidRequest(base, headers), null);
    assert.match(invalidRequest(base, {})!, /anthropic-version/);
    assert.match(invalidRequest({ ...base, max_tokens: undefined as unknown as number }, headers)!, /max_tokens/);
    assert.match(invalidRequest({ ...base, messages: [{ role: "user", content: [{ type: "text", text: "" }] }] }, headers)!, /non-empty/);
    const stray: AnthropicMessagesBody = { ...base, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "r" }] }] };
    assert.match(invalidRequest(stray, headers)!, /unexpected `tool_use_id`/);
    const mark = { cache_control: { type: "ephemeral" } };
    const marked: AnthropicMessagesBody = { ...base, system: [{ type: "text", text: "s", ...mark }], messages: [1, 2, 3, 4].map((n) => ({ role: n % 2 ? ("user" as const) : ("assistant" as const), content: [{ type: "text", text: `m${n}`, ...mark }] })) };
    assert.match(invalidRequest(marked, headers)!, /maximum of 4 blocks with cache_control/);
  });

  it("keeps a hanging request open until close() destroys it", async () => {
    const local = await startFakeAnthropic();
    local.script(anthropicReply.hang());
    const pending = Promise.resolve(createAnthropic({ baseURL: local.url, apiKey: "k" })("m").doStream({ prompt: hello }));
    pending.catch(() => {});
    assert.equal((await local.waitForRequest(0)).body.model, "m");
    await local.close();
    await assert.rejects(pending);
  });

  it("fails loudly when a request arrives with nothing scripted", async () => {
    await assert.rejects(async () => model.doStream({ prompt: hello }), (error: { statusCode?: number; message: string }) => error.statusCode === 500 && /no scripted reply/.test(error.message));
  });
});
