import { toEnvelope } from "../../src/kernel/envelope.ts";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonTurnWriter } from "../../src/builtin/commands/run-json.ts";
import { AsyncStreamEvents, collectText, type StreamEvent } from "../../src/kernel/stream.ts";
import { forgetSecrets, rememberSecrets } from "../../src/config/redaction.ts";

function writer() {
  let text = "";
  const json = new JsonTurnWriter({ write: (chunk: string) => (text += chunk) });
  return { json, lines: () => text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe("bub run --json lines", () => {
  it("passes the stream on unchanged and writes calls, results (a failed one as error), deltas and summed usage", async () => {
    const { json, lines } = writer();
    const events: StreamEvent[] = [
      { kind: "reasoning", data: { delta: "hmm" } },
      { kind: "usage", data: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } } },
      { kind: "tool_call", data: { tool_calls: [{ id: "a", function: { name: "fs_read", arguments: '{"path":"x"}' } }, { id: "b", function: { name: "bash", arguments: "not json" } }] } },
      { kind: "tool_result", data: { tool_results: ["contents", { kind: "tool", message: "exit status 1" }] } },
      { kind: "final", data: { ok: true } },
      { kind: "usage", data: { prompt_tokens: 20, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 6 } } },
      { kind: "text", data: { delta: "done" } },
      { kind: "final", data: { ok: true, text: "done" } },
    ];
    assert.equal(await collectText(json.wrap(AsyncStreamEvents.of(events))), "done");
    assert.equal(json.finish("s", [toEnvelope({ content: "done" })]), 0);
    assert.deepEqual(lines(), [
      { type: "reasoning", delta: "hmm" },
      { type: "tool_call", id: "a", name: "fs_read", arguments: { path: "x" } },
      { type: "tool_call", id: "b", name: "bash", arguments: "not json" },
      { type: "tool_result", id: "a", name: "fs_read", output: "contents" },
      { type: "tool_result", id: "b", name: "bash", error: { kind: "tool", message: "exit status 1" } },
      { type: "text", delta: "done" },
      { type: "final", ok: true, session_id: "s", text: "done", usage: { prompt_tokens: 30, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 10 } } },
    ]);
  });

  it("reports a model error once, though the turn also sends it as an error outbound, and exits 1", async () => {
    const { json, lines } = writer();
    await collectText(json.wrap(AsyncStreamEvents.of([{ kind: "error", data: { kind: "provider", message: "down" } }, { kind: "final", data: { ok: false } }])));
    assert.equal(json.finish("s", [toEnvelope({ kind: "error", content: "An error occurred: down" })]), 1);
    assert.deepEqual(lines(), [
      { type: "error", kind: "provider", message: "down" },
      { type: "final", ok: false, session_id: "s", text: "", usage: null },
    ]);
  });

  it("turns a failed command's error outbound into an error line", () => {
    const { json, lines } = writer();
    assert.equal(json.finish("s", [toEnvelope({ kind: "error", content: "unknown command" })]), 1);
    assert.deepEqual(lines()[0], { type: "error", message: "unknown command" });
  });

  it("redacts known secrets in every line: a key split over deltas, a tool result, an error, the final text", async () => {
    const key = "sk-json-0123456789";
    rememberSecrets([{ name: "api_key", value: key }]);
    try {
      const { json, lines } = writer();
      const events: StreamEvent[] = [
        { kind: "text", data: { delta: "key " } },
        { kind: "text", data: { delta: key.slice(0, 7) } },
        { kind: "text", data: { delta: `${key.slice(7)} ok` } },
        { kind: "text", data: { delta: " sk-j" } },
        { kind: "tool_call", data: { tool_calls: [{ id: "a", function: { name: "bash", arguments: "{}" } }] } },
        { kind: "tool_result", data: { tool_results: [`env: ${key}`] } },
        { kind: "error", data: { kind: "provider", message: `Incorrect API key provided: ${key}` } },
      ];
      await collectText(json.wrap(AsyncStreamEvents.of(events)));
      json.finish("s", [toEnvelope({ content: `key ${key} ok` })]);
      const written = lines();
      assert.ok(!JSON.stringify(written).includes(key.slice(0, 7)), JSON.stringify(written));
      assert.deepEqual(written.slice(0, 4), [
        { type: "text", delta: "key " },
        { type: "text", delta: "[redacted:api_key] ok" },
        { type: "text", delta: " " },
        { type: "text", delta: "sk-j" },
      ], "what was held back for a key that did not come is written before the next line");
      assert.deepEqual(written[5], { type: "tool_result", id: "a", name: "bash", output: "env: [redacted:api_key]" });
      assert.deepEqual(written[6], { type: "error", kind: "provider", message: "Incorrect API key provided: [redacted:api_key]" });
      assert.equal(written.at(-1)?.text, "key [redacted:api_key] ok");
    } finally {
      forgetSecrets();
    }
  });
});
