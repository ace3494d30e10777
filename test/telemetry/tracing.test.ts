// OpenTelemetry tracing in real `bub run` processes against the fake model, exported to a
// local OTLP/HTTP receiver in both encodings: span names, nesting, GenAI attributes, token
// usage, errors, and message content only on request, never with a secret in it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { tempDir } from "../support/temp.ts";

const execute = promisify(execFile);
/** Preloaded into a bub process: prints every @opentelemetry module it loads, as `otel-module <url>` on stderr at exit. */
const RECORD_OTEL = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from "node:module";
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); if (result.url.includes("@opentelemetry")) seen.add(result.url); return result; } });
process.on("exit", () => { for (const url of seen) process.stderr.write("otel-module " + url + "\\n"); });
`)}`;
const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));
const API_KEY = "sk-tracing-secret-key-42";

function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  assert.equal(found.length, 1, `one span named ${name} among ${spans.map((span) => span.name).join(", ")}`);
  return found[0]!;
}

describe("tracing a bub run turn", () => {
  const server = useFakeOpenAI();
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  async function bubRun(prompt: string, extra: Record<string, string | undefined>, args: string[] = ["run", prompt], node: string[] = []) {
    const dir = await tempDir();
    try {
      const env = { PATH: process.env.PATH, HOME: dir.path, BUB_HOME: join(dir.path, ".bub"), BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: API_KEY, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...extra };
      return await execute(process.execPath, [...node, bin, ...args], { cwd: dir.path, env }).catch((error: { stdout: string; stderr: string; code: number }) => error);
    } finally {
      await dir.cleanup();
    }
  }

  it("http/protobuf (the default): a turn span with chat and tool children, usage, finish reasons; no content", async () => {
    receiver.exports.length = 0;
    server.script(
      reply.toolCalls([{ id: "call_echo_1", name: "bash", arguments: JSON.stringify({ cmd: "echo tool-ran" }) }], { usage: { prompt_tokens: 11, completion_tokens: 3 } }),
      reply.text("All done.", { usage: { prompt_tokens: 20, completion_tokens: 4 } }),
    );
    const result = await bubRun("run the echo", { OTEL_SERVICE_NAME: "bub-test" });
    assert.match(result.stdout, /All done\./);
    // The spans were flushed before the process exited.
    const spans = receiver.spans();
    assert.equal(spans.length, 4, spans.map((span) => span.name).join(", "));
    assert.ok(receiver.exports.every((entry) => entry.contentType === "application/x-protobuf" && entry.body.length > 0));

    const turn = one(spans, "invoke_agent bub");
    assert.equal(turn.parentSpanId, "");
    assert.equal(turn.resource["service.name"], "bub-test");
    assert.deepEqual(
      [turn.attributes["gen_ai.operation.name"], turn.attributes["gen_ai.conversation.id"], turn.attributes["bub.channel"], turn.attributes["bub.turn.outcome"]],
      ["invoke_agent", "cli:local", "cli", "ok"],
    );
    assert.match(String(turn.attributes["bub.turn_id"]), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/, "the turn's correlation id (a UUID v7)");
    const chats = spans.filter((span) => span.name === "chat any").sort((a, b) => Number(a.startNanos - b.startNanos));
    assert.equal(chats.length, 2);
    const tool = one(spans, "execute_tool bash");
    for (const child of [...chats, tool]) {
      assert.equal(child.traceId, turn.traceId);
      assert.equal(child.parentSpanId, turn.spanId, `${child.name} is a child of the turn`);
      assert.ok(child.startNanos >= turn.startNanos && child.endNanos <= turn.endNanos, `${child.name} lies within the turn`);
    }
    const [first, second] = chats as [ReceivedSpan, ReceivedSpan];
    assert.equal(first.kind, 3, "chat spans are client spans");
    assert.deepEqual(
      [first.attributes["gen_ai.provider.name"], first.attributes["gen_ai.request.model"], first.attributes["gen_ai.usage.input_tokens"], first.attributes["gen_ai.usage.output_tokens"], first.attributes["gen_ai.response.finish_reasons"]],
      ["fake", "any", 11, 3, ["tool_calls"]],
    );
    assert.deepEqual([second.attributes["gen_ai.usage.input_tokens"], second.attributes["gen_ai.usage.output_tokens"], second.attributes["gen_ai.response.finish_reasons"]], [20, 4, ["stop"]]);
    assert.ok(tool.startNanos >= first.endNanos && tool.endNanos <= second.startNanos, "the tool ran between the two model calls");
    assert.deepEqual([tool.attributes["gen_ai.tool.name"], tool.attributes["gen_ai.tool.call.id"], tool.attributes["gen_ai.operation.name"]], ["bash", "call_echo_1", "execute_tool"]);
    assert.equal(tool.status.code, 0);
    for (const span of spans) {
      for (const key of ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]) assert.ok(!(key in span.attributes), `${key} is not recorded by default`);
    }
    const bytes = Buffer.concat(receiver.exports.map((entry) => entry.body)).toString("latin1");
    assert.ok(!bytes.includes("tool-ran") && !bytes.includes("run the echo"), "no content by default");
  });

  it("http/json with content capture: prompts, answers, tool arguments and results are recorded, the API key in none of them", async () => {
    receiver.exports.length = 0;
    server.script(
      reply.toolCalls([{ id: "call_echo_2", name: "bash", arguments: JSON.stringify({ cmd: `echo ${API_KEY}` }) }]),
      reply.text(`Your key is ${API_KEY}.`),
    );
    await bubRun(`remember my key ${API_KEY} please`, { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
    const spans = receiver.spans();
    assert.equal(spans.length, 4);
    assert.ok(receiver.exports.every((entry) => entry.contentType === "application/json"));
    const [first, second] = spans.filter((span) => span.name === "chat any").sort((a, b) => Number(a.startNanos - b.startNanos)) as [ReceivedSpan, ReceivedSpan];
    const input = JSON.parse(String(first.attributes["gen_ai.input.messages"])) as { role: string; parts: { type: string; content?: string }[] }[];
    assert.equal(input.at(-1)!.role, "user");
    assert.match(String(input.at(-1)!.parts[0]!.content), /\nremember my key \[redacted:api_key\] please$/);
    assert.equal(input[0]!.role, "system");
    assert.match(String(second.attributes["gen_ai.output.messages"]), /Your key is \[redacted:api_key\]\./);
    const tool = one(spans, "execute_tool bash");
    assert.deepEqual(JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"])), { cmd: "echo [redacted:api_key]" });
    assert.match(String(tool.attributes["gen_ai.tool.call.result"]), /\[redacted:api_key\]/);
    const bytes = Buffer.concat(receiver.exports.map((entry) => entry.body)).toString("latin1");
    assert.ok(!bytes.includes(API_KEY), "the API key is in no exported byte");
  });

  it("a failing model call: the chat span has status ERROR and error.type, the turn's outcome is error", async () => {
    receiver.exports.length = 0;
    server.script(reply.error(401, `bad key ${API_KEY}`));
    const result = await bubRun("hello", { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    assert.notEqual((result as { code?: number }).code ?? 0, 0);
    const spans = await receiver.waitForSpans(2);
    const chat = one(spans, "chat any");
    assert.equal(chat.status.code, 2);
    assert.equal(typeof chat.attributes["error.type"], "string");
    assert.equal(chat.events[0]?.name, "exception");
    assert.equal(one(spans, "invoke_agent bub").attributes["bub.turn.outcome"], "error");
    const bytes = Buffer.concat(receiver.exports.map((entry) => entry.body)).toString("latin1");
    assert.ok(!bytes.includes(API_KEY), "the key in the provider's error message is redacted");
  });

  it("BUB_TRACE_HOOKS=true: each plugin's hook call is a child span of the turn", async () => {
    receiver.exports.length = 0;
    server.script(reply.text("hooked"));
    await bubRun("hi", { BUB_TRACE_HOOKS: "true" });
    const spans = receiver.spans();
    const turn = one(spans, "invoke_agent bub");
    const hooks = spans.filter((span) => span.name.startsWith("hook "));
    const names = new Set(hooks.map((span) => span.name));
    for (const name of ["hook resolveSession", "hook loadState", "hook buildPrompt", "hook runModelStream", "hook systemPrompt", "hook saveState", "hook renderOutbound", "hook dispatchOutbound"]) assert.ok(names.has(name), `${name} among ${[...names].join(", ")}`);
    for (const span of hooks) {
      assert.equal(span.parentSpanId, turn.spanId);
      assert.notEqual(span.attributes["bub.plugin.name"], "tracing", "the tracing plugin's own hooks are not traced");
      assert.ok(span.endNanos <= turn.endNanos, `${span.name} ends within the turn (delivery included)`);
    }
    assert.equal(one(spans, "hook loadState").attributes["bub.plugin.name"], "builtin");
  });

  it("OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none send nothing", async () => {
    receiver.exports.length = 0;
    server.script(reply.text("one"), reply.text("two"));
    await bubRun("hi", { OTEL_SDK_DISABLED: "true" });
    await bubRun("hi", { OTEL_TRACES_EXPORTER: "none" });
    assert.equal(server.requests.length, 2, "both turns ran");
    assert.equal(receiver.exports.length, 0);
  });

  it("loads no OpenTelemetry module for a turn without tracing, nor for bub --help with tracing configured", async () => {
    server.script(reply.text("plain"), reply.text("traced"));
    const plain = await bubRun("hi", { OTEL_EXPORTER_OTLP_ENDPOINT: undefined }, undefined, ["--import", RECORD_OTEL]);
    assert.match(plain.stdout, /plain/);
    assert.doesNotMatch(plain.stderr, /otel-module/);
    const help = await bubRun("", {}, ["--help"], ["--import", RECORD_OTEL]);
    assert.match(help.stdout, /Usage: bub/);
    assert.doesNotMatch(help.stderr, /otel-module/);
    const traced = await bubRun("hi", {}, undefined, ["--import", RECORD_OTEL]);
    assert.match(traced.stderr, /otel-module .*@opentelemetry\/sdk-trace/, "the recorder does see a traced turn's modules");
  });

  it("a collector that is down: the turn answers, stderr stays quiet, the export gives up within OTEL_EXPORTER_OTLP_TIMEOUT", async () => {
    server.script(reply.text("still here"));
    const started = performance.now();
    const result = await bubRun("hi", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "1000" });
    assert.match(result.stdout, /still here/);
    assert.equal(result.stderr, "");
    assert.ok(performance.now() - started < 8000, "the process did not wait out the default timeout");
  });
});
