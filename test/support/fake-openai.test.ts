import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { reply, splitDeltas, startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";

async function post(server: FakeOpenAI, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

/** The JSON payloads of an SSE body, `[DONE]` as the string. */
function events(text: string): unknown[] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

type Chunk = { choices: { delta: Record<string, unknown>; finish_reason: string | null }[]; usage?: Record<string, number> };

describe("fake OpenAI server", () => {
  let server: FakeOpenAI;
  before(async () => {
    server = await startFakeOpenAI();
  });
  after(async () => {
    await server.close();
  });

  it("listens on 127.0.0.1 with a /v1 base url", () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it("streams text as several deltas, usage last when include_usage is asked, then [DONE]", async () => {
    server.script(reply.text("one two three", { reasoning: "hmm ok", usage: { prompt_tokens: 4, completion_tokens: 3 } }));
    const response = await post(server, { model: "m", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } });
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const parsed = events(await response.text());
    assert.equal(parsed.at(-1), "[DONE]");
    const chunks = parsed.slice(0, -1) as Chunk[];
    const text = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? "")).join("");
    const reasoning = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.reasoning_content ?? "")).join("");
    assert.equal(text, "one two three");
    assert.equal(reasoning, "hmm ok");
    assert.equal(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length, 3);
    assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, "stop");
  });

  it("omits usage when the client did not ask for it", async () => {
    server.script(reply.text("x", { usage: { prompt_tokens: 1, completion_tokens: 1 } }));
    const response = await post(server, { model: "m", messages: [], stream: true });
    const chunks = events(await response.text()).slice(0, -1) as Chunk[];
    assert.ok(chunks.every((chunk) => chunk.usage === undefined));
  });

  it("streams tool calls by index with argument fragments that join to the scripted text", async () => {
    server.script(reply.toolCalls([{ id: "c1", name: "a", arguments: '{"path": "x.txt"}' }, { name: "b", arguments: "{bad" }], { argumentFragments: 4 }));
    const response = await post(server, { model: "m", messages: [], stream: true });
    const chunks = events(await response.text()).slice(0, -1) as Chunk[];
    const calls = new Map<number, { id?: unknown; name?: unknown; args: string; fragments: number }>();
    for (const chunk of chunks) {
      for (const delta of (chunk.choices[0]?.delta.tool_calls as { index: number; id?: string; function: { name?: string; arguments?: string } }[] | undefined) ?? []) {
        const entry = calls.get(delta.index) ?? { args: "", fragments: 0 };
        if (delta.id) entry.id = delta.id;
        if (delta.function.name) entry.name = delta.function.name;
        if (delta.function.arguments) {
          entry.args += delta.function.arguments;
          entry.fragments++;
        }
        calls.set(delta.index, entry);
      }
    }
    assert.deepEqual(calls.get(0), { id: "c1", name: "a", args: '{"path": "x.txt"}', fragments: 4 });
    assert.equal(calls.get(1)?.args, "{bad");
    assert.equal(calls.get(1)?.id, "call_1");
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, "tool_calls");
  });

  it("answers non-streaming requests with one JSON completion", async () => {
    server.script(reply.toolCalls([{ name: "a", arguments: "{}" }], { text: "calling", usage: { prompt_tokens: 2, completion_tokens: 1 } }));
    const response = await post(server, { model: "m", messages: [] });
    const body = (await response.json()) as { choices: { message: Record<string, unknown>; finish_reason: string }[]; usage: Record<string, number> };
    assert.equal(body.choices[0]!.message.content, "calling");
    assert.deepEqual(body.choices[0]!.message.tool_calls, [{ id: "call_0", type: "function", function: { name: "a", arguments: "{}" } }]);
    assert.equal(body.choices[0]!.finish_reason, "tool_calls");
    assert.equal(body.usage.total_tokens, 3);
  });

  it("sends scripted errors with an OpenAI error body and retry-after", async () => {
    server.script(reply.error(429, "slow down", { retryAfter: 7 }), reply.contextLength(8192));
    const limited = await post(server, { model: "m", messages: [] });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "7");
    assert.deepEqual(((await limited.json()) as { error: { message: string } }).error.message, "slow down");
    const tooLong = await post(server, { model: "m", messages: [] });
    assert.equal(tooLong.status, 400);
    assert.match(((await tooLong.json()) as { error: { message: string } }).error.message, /maximum context length is 8192 tokens/);
  });

  it("records every request's headers and JSON body", async () => {
    server.script(reply.text("ok"));
    const before = server.requests.length;
    await (await post(server, { model: "rec", messages: [{ role: "user", content: "x" }], stream: false }, { authorization: "Bearer k" })).text();
    const recorded = server.requests[before]!;
    assert.equal(recorded.path, "/v1/chat/completions");
    assert.equal(recorded.headers.authorization, "Bearer k");
    assert.equal(recorded.body.model, "rec");
    assert.deepEqual(recorded.body.messages, [{ role: "user", content: "x" }]);
  });

  it("fails loudly when a request arrives with nothing scripted", async () => {
    assert.equal(server.pending(), 0);
    const response = await post(server, { model: "m", messages: [] });
    assert.equal(response.status, 500);
    assert.match(await response.text(), /no scripted reply/);
  });

  it("drops the connection before any byte, or after some chunks", async () => {
    server.script(reply.drop(0));
    await assert.rejects(post(server, { model: "m", messages: [], stream: true }));
    server.script(reply.drop(2, "a b c d"));
    const response = await post(server, { model: "m", messages: [], stream: true });
    assert.equal(response.status, 200);
    await assert.rejects(response.text());
  });

  it("waits before answering when the reply has a delay", async () => {
    server.script(reply.text("late", { delayMs: 5 }));
    const response = await post(server, { model: "m", messages: [] });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    assert.equal(body.choices[0]!.message.content, "late");
  });

  it("lets a function choose the reply from the request", async () => {
    server.script((request) => reply.text(`you said ${String(request.body.messages.at(-1)?.content)}`));
    const response = await post(server, { model: "m", messages: [{ role: "user", content: "ping" }] });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    assert.equal(body.choices[0]!.message.content, "you said ping");
  });

  it("keeps a hanging request open until close() destroys it", async () => {
    const local = await startFakeOpenAI();
    local.script(reply.hang());
    const pending = post(local, { model: "m", messages: [] });
    const arrived = await local.waitForRequest(0);
    assert.equal(arrived.body.model, "m");
    await local.close();
    await assert.rejects(pending);
  });

  it("splits text into word deltas that keep whitespace", () => {
    assert.deepEqual(splitDeltas("a  b\nc"), ["a  ", "b\n", "c"]);
    assert.deepEqual(splitDeltas(["x", "y"]), ["x", "y"]);
    assert.deepEqual(splitDeltas(""), []);
  });
});
