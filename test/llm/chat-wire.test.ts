import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { alignChatRequestBody } from "../../src/llm/chat-wire.ts";
import type { ChatMessage } from "../../src/kernel/tape-contract.ts";
import { reply } from "../support/fake-openai.ts";
import { collect, useModelClientServer } from "./model-client-support.ts";

/** A history with a tool round: what the tape gives the model on the step after a tool call. */
const history: ChatMessage[] = [
  { role: "system", content: "You are Bub." },
  { role: "user", content: "read a" },
  { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "fs_read", arguments: '{"path":"a"}' } }] },
  { role: "tool", content: "contents of a", tool_call_id: "c1", name: "fs_read" },
  { role: "user", content: "Continue the task until all targets are completed." },
];

describe("chat-completions requests in the reference's shape (against the fake server)", () => {
  const { server, clientFor } = useModelClientServer();
  const providers = [
    ["openai", "openai:gpt-test"],
    ["openrouter", "openrouter:openrouter/free"],
    ["an OpenAI-compatible provider", "fake:model-a"],
  ] as const;

  // Only OpenAI-compatible providers have a body option (transformRequestBody) for the
  // reference's shape; openai and openrouter send the SDK's own (docs/models.md, differences).
  const shapes = { "gpt-test": { content: null, name: undefined }, "openrouter/free": { content: null, name: "fs_read" }, "model-a": { content: "", name: "fs_read" } } as const;
  for (const [label, model] of providers) {
    const shape = shapes[model.slice(model.indexOf(":") + 1) as keyof typeof shapes];
    it(`${label}: an assistant tool-call message has content ${JSON.stringify(shape.content)}; the tool result ${shape.name ? "names" : "does not name"} its tool`, async () => {
      server.script(reply.text("done"));
      await collect(clientFor().client.stream({ model, messages: history }));
      const messages = server.requests[0]!.body.messages;
      assert.deepEqual(messages[2], { role: "assistant", content: shape.content, tool_calls: [{ id: "c1", type: "function", function: { name: "fs_read", arguments: '{"path":"a"}' } }] });
      assert.equal(messages[3]!.role, "tool");
      assert.equal(messages[3]!.tool_call_id, "c1");
      assert.equal(messages[3]!.content, "contents of a");
      assert.equal(messages[3]!.name, shape.name);
    });
  }

  it("openai's chat endpoint gets max_completion_tokens; openrouter and OpenAI-compatible servers get max_tokens", async () => {
    server.script(reply.text("a"), reply.text("b"), reply.text("c"));
    const { client } = clientFor({ max_tokens: 321 });
    for (const [, model] of providers) await collect(client.stream({ model, messages: [{ role: "user", content: "hi" }] }));
    assert.deepEqual(
      server.requests.map(({ body }) => [body.model, body.max_tokens, body.max_completion_tokens]),
      [
        ["gpt-test", undefined, 321],
        ["openrouter/free", 321, undefined],
        ["model-a", 321, undefined],
      ],
    );
  });

  it("an explicit maxTokens (a 1-token probe) goes in the same field", async () => {
    server.script(reply.text("a"));
    await collect(clientFor({ max_tokens: 999 }).client.stream({ model: "openai:gpt-test", messages: [{ role: "user", content: "hi" }], maxTokens: 1 }));
    assert.equal(server.requests[0]!.body.max_completion_tokens, 1);
    assert.equal("max_tokens" in server.requests[0]!.body, false);
  });
});

describe("alignChatRequestBody", () => {
  it("fills null assistant content, names tool results from their calls, and keeps names already given", () => {
    const body = {
      model: "m",
      messages: [
        { role: "assistant", content: null, tool_calls: [{ id: "a", type: "function", function: { name: "bash", arguments: "{}" } }, { id: "b", type: "function", function: { name: "fs_read", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "a", content: "x" },
        { role: "tool", tool_call_id: "b", content: "y", name: "kept" },
        { role: "tool", tool_call_id: "unknown", content: "z" },
        { role: "assistant", content: "text stays" },
      ],
    };
    assert.equal(alignChatRequestBody(body), body);
    assert.deepEqual(body.messages.slice(1), [
      { role: "tool", tool_call_id: "a", content: "x", name: "bash" },
      { role: "tool", tool_call_id: "b", content: "y", name: "kept" },
      { role: "tool", tool_call_id: "unknown", content: "z" },
      { role: "assistant", content: "text stays" },
    ]);
    assert.equal(body.messages[0]!.content, "");
  });
});
