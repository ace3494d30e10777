/**
 * OpenTelemetry tracing in the installed package: `bub run` with a tool call against the
 * fake model, OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP receiver. The
 * spans arrive (flushed before the process exits), nested under the turn, with the GenAI
 * attributes; the API key is in none of the bytes sent.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const API_KEY = "sk-e2e-tracing-secret";

describe("tracing (installed package)", () => {
  let openai: FakeOpenAI;
  let receiver: OtlpReceiver;
  before(async () => {
    await installedPackage();
    [openai, receiver] = await Promise.all([startFakeOpenAI(), startOtlpReceiver()]);
  });
  after(() => Promise.all([openai.close(), receiver.close()]));

  it("bub run exports invoke_agent, chat and execute_tool spans to OTEL_EXPORTER_OTLP_ENDPOINT", async () => {
    const home = await tempHome();
    try {
      await writeFile(join(home.path, "notes.txt"), "buy milk\n");
      openai.script(
        reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
        reply.text("The notes say: buy milk.", { usage: { prompt_tokens: 120, completion_tokens: 8 } }),
      );
      const env = {
        BUB_HOME: join(home.path, ".bub"),
        BUB_MODEL: "local:any",
        BUB_API_BASE: openai.url,
        BUB_API_KEY: API_KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: "bub-e2e",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      };
      const result = await runBub(["run", `what do my notes say? my key is ${API_KEY}`], { home: home.path, env });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /The notes say: buy milk\./);
      const spans = receiver.spans();
      assert.deepEqual(spans.map((span) => span.name).sort(), ["chat any", "chat any", "execute_tool fs_read", "invoke_agent bub"]);
      const turn = spans.find((span) => span.name === "invoke_agent bub")!;
      assert.equal(turn.resource["service.name"], "bub-e2e");
      assert.equal(turn.attributes["bub.turn.outcome"], "ok");
      for (const span of spans.filter((each) => each !== turn)) assert.equal(span.parentSpanId, turn.spanId, `${span.name} is a child of the turn`);
      const tool = spans.find((span) => span.name === "execute_tool fs_read")!;
      assert.equal(tool.attributes["gen_ai.tool.call.id"], "call_notes");
      assert.equal(tool.attributes["gen_ai.tool.call.result"], "buy milk");
      const usage = spans.filter((span) => span.name === "chat any").map((span) => span.attributes["gen_ai.usage.input_tokens"]).sort();
      assert.deepEqual(usage, [100, 120]);
      assert.ok(receiver.exports.every((entry) => entry.contentType === "application/x-protobuf"));
      assert.ok(!Buffer.concat(receiver.exports.map((entry) => entry.body)).toString("latin1").includes(API_KEY), "the API key is in no exported byte");
    } finally {
      await home.cleanup();
    }
  });
});
