// What bub adds to an MCP tool call over the SDK's own `client.callTool`, over stdio to a
// local server (the real @modelcontextprotocol/server-filesystem, reading a small file).
//
// Two servers are started, each in its own process: one behind a bare SDK Client, one behind
// bub's MCP manager (its tool taken from a tool registry, called through `invokeTool`, the
// function the agent's executor calls for every tool call: argument validation, the call
// report, the server's result turned into the model's text). Calls alternate between the two,
// one pair at a time, after a warm-up; the bench prints each side's median and p90 and the
// median of the per-pair differences, which is the overhead judged against the 1 ms budget.
//
//   node bench/mcp/call-overhead.ts [pairs=2000]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { setLogSink } from "../../src/kernel/log.ts";
import { McpManager } from "../../src/mcp/manager.ts";
import { invokeTool } from "../../src/tools/executor.ts";
import { createToolRegistry } from "../../src/tools/registry.ts";

const pairs = Number(process.argv[2] ?? 2000);
const warmup = 200;
const server = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "bub-mcp-bench-"));
const file = join(dir, "note.txt");
writeFileSync(file, "a short note\n");
writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { fs: { command: process.execPath, args: [server, dir] } } }));
setLogSink(() => undefined);

const raw = new Client({ name: "bench", version: "1.0.0" });
await raw.connect(new StdioClientTransport({ command: process.execPath, args: [server, dir], stderr: "ignore" }));
await raw.listTools();

const registry = createToolRegistry();
const manager = new McpManager({ home: dir, workspace: dir, env: process.env, trusted: false, registry: async () => registry });
await manager.ensureStarted();
const tool = registry.get("mcp.fs.read_text_file");
if (!tool) throw new Error(`bub did not register mcp.fs.read_text_file: ${JSON.stringify(manager.statuses())}`);

const args = { path: file };
async function rawCall(): Promise<number> {
  const started = performance.now();
  const result = await raw.callTool({ name: "read_text_file", arguments: args });
  const elapsed = performance.now() - started;
  if ((result.content as { text: string }[])[0]?.text !== "a short note\n") throw new Error("raw call: unexpected result");
  return elapsed;
}
async function bubCall(): Promise<number> {
  const started = performance.now();
  const result = await invokeTool(tool!, args, null, { reporter: null });
  const elapsed = performance.now() - started;
  if (result !== "a short note\n") throw new Error("bub call: unexpected result");
  return elapsed;
}

const rawTimes: number[] = [];
const bubTimes: number[] = [];
const differences: number[] = [];
for (let index = 0; index < warmup + pairs; index++) {
  // Alternate which side goes first, so neither always runs on a warmer process.
  const [first, second] = index % 2 === 0 ? [await rawCall(), await bubCall()] : [await bubCall(), await rawCall()].reverse();
  if (index < warmup) continue;
  rawTimes.push(first!);
  bubTimes.push(second!);
  differences.push(second! - first!);
}

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const ms = (value: number) => `${value.toFixed(3)} ms`;
console.log(`node ${process.version}, ${pairs} pairs after ${warmup} warm-up pairs, read_text_file of a 13-byte file over stdio`);
console.log(`raw SDK callTool   median ${ms(quantile(rawTimes, 0.5))}  p90 ${ms(quantile(rawTimes, 0.9))}`);
console.log(`bub mcp tool       median ${ms(quantile(bubTimes, 0.5))}  p90 ${ms(quantile(bubTimes, 0.9))}`);
const overhead = quantile(differences, 0.5);
console.log(`overhead (median of per-pair differences) ${ms(overhead)}  p90 ${ms(quantile(differences, 0.9))}  budget 1 ms: ${overhead <= 1 ? "met" : "MISSED"}`);

await raw.close();
await manager.close();
rmSync(dir, { recursive: true, force: true });
