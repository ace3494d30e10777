// What OpenTelemetry tracing adds to a turn, in process: two frameworks built by createBub
// (the builtin plugin, file tapes, the fake OpenAI-compatible server on 127.0.0.1), one with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP receiver, the other without.
// Each turn is a tool call (fs.read) and an answer, so it makes 4 spans (turn, 2 chats, 1
// tool); the two frameworks take turns, round after round, so drift hits both alike. The
// spans are exported (http/protobuf) in batches while the turns run and flushed at the end;
// every span must reach the receiver.
// Budget: tracing on adds ≤ 2 ms per turn (median against median).
//
//   node bench/agent/tracing.ts [turns=300]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { reply, startFakeOpenAI } from "../../test/support/fake-openai.ts";
import { startOtlpReceiver } from "../../test/support/otlp-receiver.ts";

const BUDGET_MS = 2;
const turns = Math.max(20, Number(process.argv[2] ?? 300));
const warmup = 20;

const scratch = mkdtempSync(join(tmpdir(), "bub-bench-tracing-"));
const server = await startFakeOpenAI();
const receiver = await startOtlpReceiver();
writeFileSync(join(scratch, "notes.txt"), "buy milk\n");

async function framework(name: string, extra: Record<string, string>): Promise<BubFramework> {
  const env = { PATH: process.env.PATH, HOME: scratch, BUB_HOME: join(scratch, name), BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-bench-key", ...extra };
  return createBub({ workspace: scratch, env, trustWorkspace: false });
}

const plain = await framework("plain", {});
const traced = await framework("traced", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
if (!traced.pluginStatus.some((status) => status.name === "tracing")) throw new Error("the traced framework has no tracing plugin");
if (plain.pluginStatus.some((status) => status.name === "tracing")) throw new Error("the plain framework has a tracing plugin");

let sequence = 0;
async function turn(bub: BubFramework): Promise<number> {
  const answer = `Your notes say buy milk (${++sequence}).`;
  server.script(reply.toolCalls([{ name: "fs_read", arguments: JSON.stringify({ path: "notes.txt" }) }]), reply.text(answer, { usage: { prompt_tokens: 900, completion_tokens: 8 } }));
  const started = performance.now();
  const result = await bub.running(() => bub.processInbound({ channel: "bench", chat_id: "1", content: "what do my notes say?" }));
  const elapsed = performance.now() - started;
  if (result.modelOutput !== answer) throw new Error(`unexpected answer: ${result.modelOutput}`);
  return elapsed;
}

const samples = { plain: [] as number[], traced: [] as number[] };
for (let round = 0; round < warmup + turns; round++) {
  const order: [keyof typeof samples, BubFramework][] = round % 2 === 0 ? [["plain", plain], ["traced", traced]] : [["traced", traced], ["plain", plain]];
  for (const [label, bub] of order) {
    const ms = await turn(bub);
    if (round >= warmup) samples[label].push(ms);
  }
}
await plain.shutdown();
await traced.shutdown();
const expectedSpans = (warmup + turns) * 4;
await receiver.waitForSpans(expectedSpans, 30_000);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
const row = (label: string, values: number[]) => `${label.padEnd(26)} median ${quantile(values, 0.5).toFixed(2).padStart(6)} ms   p90 ${quantile(values, 0.9).toFixed(2).padStart(6)} ms   mean ${(values.reduce((a, b) => a + b, 0) / values.length).toFixed(2).padStart(6)} ms`;
console.log(`node ${process.version}, ${turns} timed turns each (after ${warmup} warm-up), a tool call and an answer per turn`);
console.log(row("tracing off", samples.plain));
console.log(row("tracing on (http/protobuf)", samples.traced));
const added = quantile(samples.traced, 0.5) - quantile(samples.plain, 0.5);
console.log(`added per turn: ${added.toFixed(2)} ms (median - median), budget ≤ ${BUDGET_MS} ms: ${added <= BUDGET_MS ? "ok" : "OVER"}`);
console.log(`receiver: ${receiver.spans().length} spans in ${receiver.exports.length} exports (${expectedSpans} expected)`);
await receiver.close();
await server.close();
rmSync(scratch, { recursive: true, force: true });
if (added > BUDGET_MS) process.exitCode = 1;
