// How the chat REPL keeps up: (1) time from `bub chat` start to the prompt being ready,
// (2) live Markdown rendering of a model streaming 2,000 tokens/s.
// Build first (npm run build), then run: node bench/cli/chat-render.ts [runs]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { Terminal } from "../../src/channels/cli/terminal.ts";
import { TurnPrinter } from "../../src/channels/cli/turn-printer.ts";
import { loadMarkdownRenderer } from "../../src/channels/cli/markdown.ts";

const runs = Number(process.argv[2] ?? 10);
// The package's bin (the esbuild bundle), what `npx bub chat` runs.
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { bin: { bub: string } };
const bin = fileURLToPath(new URL(`../../${pkg.bin.bub}`, import.meta.url));
if (!existsSync(bin)) throw new Error(`${pkg.bin.bub} is missing: run \`npm run build\` first`);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Spawns `bub chat` with open piped input; resolves when the welcome block (printed right before the prompt) is out. */
function promptReady(): Promise<number> {
  const home = mkdtempSync(join(tmpdir(), "bub-bench-chat-"));
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [bin, "chat"], { env: { PATH: process.env.PATH, HOME: home, BUB_HOME: home }, stdio: ["pipe", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("',quit' to leave")) {
        const elapsed = performance.now() - start;
        child.stdin.end(",quit\n");
        child.once("exit", () => resolve(elapsed));
      }
    });
    child.once("error", reject);
  });
}

const startup: number[] = [];
for (let index = 0; index < runs + 2; index++) {
  const elapsed = await promptReady();
  if (index >= 2) startup.push(elapsed);
}
console.log(`bub chat start → prompt ready: median ${median(startup).toFixed(1)} ms, min ${Math.min(...startup).toFixed(1)} ms over ${runs} runs`);

// 2,000 tokens in one second, ~4 characters each, as Markdown with paragraphs, lists and code.
const markdown = await loadMarkdownRenderer();
const output = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 40 });
let bytes = 0;
output.on("data", (chunk: Buffer) => (bytes += chunk.length));
const terminal = new Terminal({ input: Object.assign(new PassThrough(), { isTTY: true }), output, interactive: true, color: true, env: {} });
await terminal.prepare();
terminal.showPrompt();
terminal.setBusy(true);
const printer = new TurnPrinter(terminal, { kind: "normal", expandThinking: false, markdown, throttleMs: 50 });
const words = "The **quick** brown fox `jumps` over the lazy dog and keeps running. ".split(/(?<= )/);
const tokens: string[] = [];
for (let index = 0; tokens.length < 2000; index++) {
  if (index % 60 === 59) tokens.push("\n\n- a list item\n- another one\n\n```ts\nconst x = 1;\n```\n\n");
  tokens.push(words[index % words.length]!);
}
let renderMs = 0;
const started = performance.now();
for (let batch = 0; batch < 1000; batch++) {
  // Two tokens per millisecond; time spent inside the printer is what could fall behind.
  const due = started + batch;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const before = performance.now();
  for (const delta of tokens.slice(batch * 2, batch * 2 + 2)) printer.handle({ kind: "text", data: { delta } });
  renderMs += performance.now() - before;
}
const before = performance.now();
printer.finish();
renderMs += performance.now() - before;
const wall = performance.now() - started;
terminal.close();
console.log(`2,000 tokens at 2,000 tokens/s: streamed in ${wall.toFixed(0)} ms wall (ideal 1000), ${renderMs.toFixed(1)} ms spent rendering (${((renderMs / wall) * 100).toFixed(1)}% of the time), ${(bytes / 1024).toFixed(0)} KiB written`);
