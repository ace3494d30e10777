import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MISSING_TOOL_RESULT, audioMimeType, toModelPrompt, withAnthropicCacheControl } from "../../src/llm/messages.ts";

describe("toModelPrompt", () => {
  it("maps system, user and assistant text", () => {
    assert.deepEqual(
      toModelPrompt([
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
        { role: "developer", content: "dev note" },
      ]),
      [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: [{ type: "text", text: "hello" }] },
        { role: "system", content: "dev note" },
      ],
    );
  });

  it("maps multimodal user parts to text and file parts", () => {
    const [message] = toModelPrompt([
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0K" } },
          { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
          { type: "input_audio", input_audio: { data: "SUQz", format: "mp3" } },
          { type: "video_url", video_url: { url: "data:video/mp4;base64,AAAA" } },
          { type: "unknown_part", x: 1 },
        ],
      },
    ]);
    assert.equal(message!.role, "user");
    const content = message!.content as unknown[];
    assert.deepEqual(content[0], { type: "text", text: "look" });
    assert.deepEqual(content[1], { type: "file", mediaType: "image/png", data: { type: "data", data: "iVBORw0K" } });
    assert.deepEqual(content[2], { type: "file", mediaType: "image", data: { type: "url", url: new URL("https://example.com/cat.jpg") } });
    assert.deepEqual(content[3], { type: "file", mediaType: "audio/mpeg", data: { type: "data", data: "SUQz" } });
    assert.deepEqual(content[4], { type: "file", mediaType: "video/mp4", data: { type: "data", data: "AAAA" } });
    assert.equal(content.length, 5, "unsupported parts are skipped");
  });

  it("maps assistant tool calls and their tool results, combining consecutive tool messages", () => {
    const prompt = toModelPrompt([
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "fs_read", arguments: '{"path":"a"}' } },
          { id: "c2", type: "function", function: { name: "bash", arguments: "{not json" } },
        ],
      },
      { role: "tool", content: "file a", tool_call_id: "c1", name: "fs_read" },
      { role: "tool", content: { ok: true }, tool_call_id: "c2" },
      { role: "user", content: "next" },
    ]);
    assert.deepEqual(prompt, [
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "c1", toolName: "fs_read", input: { path: "a" } },
          { type: "tool-call", toolCallId: "c2", toolName: "bash", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "fs_read", output: { type: "text", value: "file a" } },
          { type: "tool-result", toolCallId: "c2", toolName: "bash", output: { type: "text", value: '{"ok":true}' } },
        ],
      },
      { role: "user", content: [{ type: "text", text: "next" }] },
    ]);
  });

  it("adds a placeholder result for a tool call whose result is missing", () => {
    const prompt = toModelPrompt([
      { role: "assistant", content: "", tool_calls: [{ id: "c1", function: { name: "a", arguments: "{}" } }, { id: "c2", function: { name: "b", arguments: "{}" } }] },
      { role: "tool", content: "only one", tool_call_id: "c1" },
      { role: "user", content: "go on" },
    ]);
    assert.deepEqual(prompt[1], {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "a", output: { type: "text", value: "only one" } },
        { type: "tool-result", toolCallId: "c2", toolName: "b", output: { type: "text", value: MISSING_TOOL_RESULT } },
      ],
    });
    const trailing = toModelPrompt([{ role: "assistant", content: null, tool_calls: [{ id: "x", function: { name: "t", arguments: "" } }] }]);
    assert.equal(trailing.at(-1)!.role, "tool");
  });

  it("turns a tool result that answers no call into a user note", () => {
    const prompt = toModelPrompt([{ role: "tool", content: "stray", name: "bash" }]);
    assert.deepEqual(prompt, [{ role: "user", content: [{ type: "text", text: "[tool result from 'bash' without a matching call]\nstray" }] }]);
  });
});

describe("withAnthropicCacheControl", () => {
  it("marks the system prompt and the last two messages as ephemeral cache breakpoints", () => {
    const marked = withAnthropicCacheControl(
      toModelPrompt([
        { role: "system", content: "s" },
        { role: "user", content: "1" },
        { role: "assistant", content: "2" },
        { role: "user", content: "3" },
      ]),
    );
    const flags = marked.map((message) => JSON.stringify(message.providerOptions ?? null));
    const ephemeral = JSON.stringify({ anthropic: { cacheControl: { type: "ephemeral" } } });
    assert.deepEqual(flags, [ephemeral, "null", ephemeral, ephemeral]);
  });
});

describe("audioMimeType", () => {
  it("maps audio formats to MIME types", () => {
    assert.equal(audioMimeType("mp3"), "audio/mpeg");
    assert.equal(audioMimeType("M4A"), "audio/mp4");
    assert.equal(audioMimeType("opus"), "audio/opus");
  });
});
