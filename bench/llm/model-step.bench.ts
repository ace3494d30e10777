/**
 * Overhead of one agent step over the raw HTTP exchange.
 *
 * A fake OpenAI-compatible server on 127.0.0.1 streams a 200-token reply (200 SSE content
 * chunks plus usage). Measured per iteration, interleaved so drift affects all equally:
 *
 * - `raw fetch`        — POST + read the SSE body to the end (the floor);
 * - `raw fetch + SSE`  — the same, splitting and JSON-parsing every `data:` line;
 * - `client.stream`    — the AI SDK provider call through `ModelClient` (retry/fallback shell);
 * - `runModelStep`     — a whole step: hooks, message conversion, the call, record.
 *
 * Run: `node bench/llm/model-step.bench.ts [iterations]`
 */
import { testTurnContext } from "../../test/support/framework.ts";
import { AgentHooks } from "../../src/agent/interceptors.ts";
import { setLogSink } from "../../src/kernel/log.ts";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import { createModelClient } from "../../src/llm/model-client.ts";
import { runModelStep } from "../../src/llm/model-step.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";
import { defineTool } from "../../src/tools/tool.ts";
import { z } from "zod";
import { reply, startFakeOpenAI } from "../../test/support/fake-openai.ts";

const iterations = Number(process.argv[2] ?? 200);
const warmup = 30;
const TOKENS = 200;

setLogSink(() => undefined);
const server = await startFakeOpenAI();
const answer = Array.from({ length: TOKENS }, (_, index) => `tok${index} `);
const scriptOne = () => server.script(reply.text(answer, { usage: { prompt_tokens: 120, completion_tokens: TOKENS } }));

const settings = defaultModelSettings({ model: "fake:bench", api_base: server.url, api_key: "k", max_tokens: 1024 });
const client = createModelClient(settings, { env: {} });
const hooks = new AgentHooks(new HookRuntime(), testTurnContext());
const tools = ["fs.read", "fs.write", "bash"].map((name) =>
  defineTool({ name, description: `${name} tool`, parameters: z.object({ path: z.string(), limit: z.number().optional() }), run: () => "" }),
);
const history = [
  { role: "user", content: "earlier question" },
  { role: "assistant", content: "earlier answer" },
];
const messages = [{ role: "system", content: "You are Bub." }, ...history, { role: "user", content: "go" }];
const body = JSON.stringify({ model: "bench", messages, stream: true, stream_options: { include_usage: true } });

async function rawFetch(parse: boolean): Promise<number> {
  const response = await fetch(`${server.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const text = await response.text();
  if (!parse) return text.length;
  let count = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] };
    if (chunk.choices[0]?.delta.content) count++;
  }
  if (count !== TOKENS) throw new Error(`expected ${TOKENS} deltas, got ${count}`);
  return count;
}

async function clientStream(): Promise<number> {
  let count = 0;
  for await (const event of client.stream({ model: "fake:bench", messages })) if (event.type === "text") count++;
  if (count !== TOKENS) throw new Error(`expected ${TOKENS} deltas, got ${count}`);
  return count;
}

async function modelStep(): Promise<number> {
  let count = 0;
  let recorded = 0;
  const step = runModelStep({
    client,
    model: "fake:bench",
    systemPrompt: "You are Bub.",
    history,
    prompt: "go",
    tools,
    state: {},
    hooks,
    tape: null,
    record: () => void recorded++,
  });
  for await (const event of step) if (event.kind === "text") count++;
  if (count !== TOKENS || recorded !== 1) throw new Error("step did not complete");
  return count;
}

const cases: [string, () => Promise<number>][] = [
  ["raw fetch", () => rawFetch(false)],
  ["raw fetch + SSE parse", () => rawFetch(true)],
  ["client.stream", clientStream],
  ["runModelStep", modelStep],
];

const samples = new Map<string, number[]>(cases.map(([name]) => [name, []]));
for (let round = 0; round < warmup + iterations; round++) {
  for (const [name, run] of cases) {
    scriptOne();
    const started = performance.now();
    await run();
    const elapsed = performance.now() - started;
    if (round >= warmup) samples.get(name)!.push(elapsed);
  }
}
await server.close();

function stats(values: number[]): { median: number; p95: number; mean: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: at(0.5), p95: at(0.95), mean: values.reduce((sum, value) => sum + value, 0) / values.length };
}

const baseline = stats(samples.get("raw fetch + SSE parse")!).median;
console.log(`${TOKENS}-token streamed reply, ${iterations} iterations (after ${warmup} warm-up), Node ${process.version}`);
console.log("case                     median ms   p95 ms   mean ms   overhead vs raw+SSE (median)");
for (const [name] of cases) {
  const { median, p95, mean } = stats(samples.get(name)!);
  const overhead = median - baseline;
  console.log(
    `${name.padEnd(24)} ${median.toFixed(3).padStart(9)} ${p95.toFixed(3).padStart(8)} ${mean.toFixed(3).padStart(9)}   ${overhead >= 0 ? "+" : ""}${overhead.toFixed(3)} ms (${((overhead / baseline) * 100).toFixed(0)}%)`,
  );
}
