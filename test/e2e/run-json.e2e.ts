/**
 * `bub run --json`, `bub run --model` and `bub models` on the installed binary, against
 * fake OpenAI-compatible and Anthropic servers.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

describe("bub run --json, --model and bub models (installed package)", () => {
  let openai: FakeOpenAI;
  let unlisted: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    [openai, unlisted, anthropic] = await Promise.all([
      startFakeOpenAI({ models: ["small-model", "large-model"] }),
      startFakeOpenAI(),
      startFakeAnthropic({ apiKey: "sk-ant", models: ["claude-b", "claude-a"] }),
    ]);
  });
  after(() => Promise.all([openai.close(), unlisted.close(), anthropic.close()]));
  beforeEach(async () => {
    openai.requests.length = 0;
    home = await tempHome();
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:small-model", BUB_LOCAL_API_BASE: openai.url };
  });
  afterEach(async () => {
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  it("--json prints one JSON object a line: the tool call, its result, text deltas, the final answer with usage", async () => {
    await writeFile(join(home.path, "notes.txt"), "buy milk\n");
    openai.script(
      reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
      reply.text("The notes say: buy milk.", { usage: { prompt_tokens: 120, completion_tokens: 8 } }),
    );
    const result = await runBub(["run", "--json", "what do my notes say?"], { home: home.path, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "");
    const events = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(events[0], { type: "tool_call", id: "call_notes", name: "fs_read", arguments: { path: "notes.txt" } });
    assert.deepEqual(events[1], { type: "tool_result", id: "call_notes", name: "fs_read", output: "buy milk" });
    const deltas = events.filter((event) => event.type === "text").map((event) => event.delta);
    assert.ok(deltas.length > 1, "the answer streams in several deltas");
    assert.equal(deltas.join(""), "The notes say: buy milk.");
    assert.deepEqual(events.at(-1), {
      type: "final",
      ok: true,
      session_id: "cli:local",
      text: "The notes say: buy milk.",
      usage: { prompt_tokens: 220, completion_tokens: 18, total_tokens: 238 },
    });
  });

  it("--json reports a failed turn as an error line, then a final line with ok false, exit 1", async () => {
    openai.script(reply.error(401, "Incorrect API key provided"));
    const result = await runBub(["run", "--json", "hello"], { home: home.path, env });
    assert.equal(result.code, 1);
    const events = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const errors = events.filter((event) => event.type === "error");
    assert.equal(errors.length, 1, result.stdout);
    assert.match(String(errors[0]!.message), /401|Incorrect API key/);
    assert.equal(events.at(-1)!.type, "final");
    assert.equal(events.at(-1)!.ok, false);
  });

  it("--model applies to one run: the next run uses the configured model again", async () => {
    openai.script(reply.text("large"), reply.text("small"));
    const once = await runBub(["run", "--model", "local:large-model", "hi"], { home: home.path, env });
    assert.equal(once.code, 0, once.stderr);
    const next = await runBub(["run", "hi"], { home: home.path, env });
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual(openai.requests.map((request) => request.body.model), ["large-model", "small-model"]);
  });

  it("--model with something that is not provider:model is a usage error (exit 2)", async () => {
    const result = await runBub(["run", "--model", "nonsense", "hi"], { home: home.path, env });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /provider:model/);
    assert.equal(result.stdout, "");
  });

  it("bub models lists what a provider offers, one provider:model a line", async () => {
    const local = await runBub(["models"], { home: home.path, env });
    assert.equal(local.code, 0, local.stderr);
    assert.equal(local.stdout, "local:large-model\nlocal:small-model\n");
    const claude = await runBub(["models", "anthropic"], { home: home.path, env: { ...env, BUB_ANTHROPIC_API_BASE: anthropic.url, BUB_ANTHROPIC_API_KEY: "sk-ant" } });
    assert.equal(claude.code, 0, claude.stderr);
    assert.equal(claude.stdout, "anthropic:claude-a\nanthropic:claude-b\n");
  });

  it("bub models says so in one line when the provider has no models endpoint", async () => {
    const result = await runBub(["models", "quiet"], { home: home.path, env: { ...env, BUB_QUIET_API_BASE: unlisted.url } });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.match(result.stderr, /^bub: Provider 'quiet' does not list its models/);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
  });
});
