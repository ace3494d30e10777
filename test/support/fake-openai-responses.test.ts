import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { reply, startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { invalidResponsesRequest, type ResponsesBody, type ResponsesInputItem } from "./fake-openai-responses.ts";

const readTool: LanguageModelV4FunctionTool = {
  type: "function",
  name: "fs_read",
  description: "read a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

const hello: LanguageModelV4Prompt = [
  { role: "system", content: "be brief" },
  { role: "user", content: [{ type: "text", text: "hello" }] },
];

async function parts(model: LanguageModelV4, options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamPart[]> {
  const { stream } = await model.doStream(options);
  const out: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) out.push(part);
  return out;
}

function inputOf(server: FakeOpenAI, index: number): ResponsesInputItem[] {
  return (server.requests[index]!.body as unknown as ResponsesBody).input as ResponsesInputItem[];
}

describe("fake OpenAI server: the Responses API (with the real @ai-sdk/openai client)", () => {
  let server: FakeOpenAI;
  let model: LanguageModelV4;
  before(async () => {
    server = await startFakeOpenAI();
    model = createOpenAI({ baseURL: server.url, apiKey: "sk-test" }).responses("gpt-4o-mini");
  });
  after(() => server.close());
  beforeEach(() => {
    assert.equal(server.pending(), 0, "the previous test consumed its script");
    server.requests.length = 0;
  });

  it("streams text as output_text deltas, then finish with usage", async () => {
    server.script(reply.text("Hi there, friend", { usage: { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } } }));
    const streamed = await parts(model, { prompt: hello, maxOutputTokens: 50 });
    assert.deepEqual(
      streamed.filter((part) => part.type === "text-delta").map((part) => part.delta),
      ["Hi ", "there, ", "friend"],
    );
    const finish = streamed.find((part) => part.type === "finish");
    assert.ok(finish && finish.type === "finish");
    assert.equal(finish.finishReason.unified, "stop");
    assert.equal(finish.usage.inputTokens.total, 12);
    assert.equal(finish.usage.inputTokens.cacheRead, 4);
    assert.equal(finish.usage.outputTokens.total, 3);
    const request = server.requests[0]!;
    assert.equal(request.path, "/v1/responses");
    assert.equal(request.headers.authorization, "Bearer sk-test");
    assert.equal(request.body.stream, true);
    assert.equal(request.body.max_output_tokens, 50);
    assert.deepEqual(
      inputOf(server, 0).map((item) => item.role),
      ["system", "user"],
    );
  });

  it("streams a function call whose argument deltas join to the scripted arguments", async () => {
    server.script(reply.toolCalls([{ id: "call_7", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { text: "Let me look.", argumentFragments: 4 }));
    const streamed = await parts(model, { prompt: hello, tools: [readTool] });
    assert.equal(streamed.filter((part) => part.type === "text-delta").map((part) => part.delta).join(""), "Let me look.");
    assert.equal(streamed.filter((part) => part.type === "tool-input-delta").map((part) => part.delta).join(""), '{"path":"notes.txt"}');
    const call = streamed.find((part) => part.type === "tool-call");
    assert.ok(call && call.type === "tool-call");
    assert.equal(call.toolCallId, "call_7");
    assert.equal(call.toolName, "fs_read");
    assert.deepEqual(JSON.parse(call.input), { path: "notes.txt" });
    const finish = streamed.find((part) => part.type === "finish");
    assert.ok(finish && finish.type === "finish");
    assert.equal(finish.finishReason.unified, "tool-calls");
    const tools = server.requests[0]!.body.tools as unknown as { type: string; name: string }[];
    assert.deepEqual(tools.map((tool) => [tool.type, tool.name]), [["function", "fs_read"]]);
  });

  it("accepts the function_call_output of the next turn and records it", async () => {
    server.script(reply.text("It says hi."));
    const prompt: LanguageModelV4Prompt = [
      ...hello,
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "call_7", toolName: "fs_read", input: { path: "notes.txt" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "call_7", toolName: "fs_read", output: { type: "text", value: "hi" } }] },
    ];
    const streamed = await parts(model, { prompt, tools: [readTool] });
    assert.equal(streamed.filter((part) => part.type === "text-delta").map((part) => part.delta).join(""), "It says hi.");
    const output = inputOf(server, 0).find((item) => item.type === "function_call_output");
    assert.equal(output?.call_id, "call_7");
    assert.match(JSON.stringify(output?.output), /hi/);
  });

  it("answers a non-streaming request with one response object", async () => {
    server.script(reply.toolCalls([{ name: "fs_read", arguments: '{"path":"a"}' }], { text: "reading", usage: { prompt_tokens: 3, completion_tokens: 2 } }));
    const result = await model.doGenerate({ prompt: hello, tools: [readTool] });
    assert.deepEqual(
      result.content.map((part) => part.type),
      ["text", "tool-call"],
    );
    assert.equal(result.finishReason.unified, "tool-calls");
    assert.equal(result.usage.inputTokens.total, 3);
  });

  it("sends scripted errors in the OpenAI error shape", async () => {
    server.script(reply.error(429, "slow down", { retryAfter: 2 }));
    const error = await Promise.resolve(model.doStream({ prompt: hello })).then(
      () => assert.fail("429 should reject"),
      (failure: { statusCode?: number; message: string; isRetryable?: boolean }) => failure,
    );
    assert.equal(error.statusCode, 429);
    assert.equal(error.message, "slow down");
    assert.equal(error.isRetryable, true);
  });

  it("refuses, like the real API, a function_call_output without its function_call", async () => {
    const prompt: LanguageModelV4Prompt = [...hello, { role: "tool", content: [{ type: "tool-result", toolCallId: "call_lost", toolName: "fs_read", output: { type: "text", value: "hi" } }] }];
    await assert.rejects(
      async () => model.doStream({ prompt, tools: [readTool] }),
      (failure: { statusCode?: number; message: string }) => failure.statusCode === 400 && /No tool call found for function call output with call_id call_lost/.test(failure.message),
    );
  });

  it("resolves item references to the items of earlier responses", () => {
    const stored = new Map([["fc_1", { id: "fc_1", type: "function_call", call_id: "call_1", name: "fs_read", arguments: "{}" }]]);
    const body = (input: ResponsesInputItem[]): ResponsesBody => ({ model: "m", input });
    assert.equal(invalidResponsesRequest(body([{ type: "item_reference", id: "fc_1" }, { type: "function_call_output", call_id: "call_1", output: "x" }]), stored), null);
    assert.match(invalidResponsesRequest(body([{ type: "item_reference", id: "fc_9" }]), stored)!, /Item with id 'fc_9' not found/);
    assert.match(invalidResponsesRequest(body([{ type: "function_call", call_id: "call_2", name: "a", arguments: "{}" }]), stored)!, /No tool output found for function call call_2/);
    assert.equal(invalidResponsesRequest({ model: "m", input: "hi" }, stored), null);
  });
});
