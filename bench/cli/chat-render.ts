// How the installed chat REPL keeps up: (1) time from `bub chat` start to the prompt being
// ready, against `node -e 0` with the same Node, run alternately; (2) live Markdown rendering
// of a model streaming 2,000 tokens/s, in process, with the installed package's own
// terminal, printer and renderer (dist/, not src/).
// Packs the checkout and installs the tarball into a temporary prefix first (what users run).
//
//   node bench/cli/chat-render.ts [runs=15]
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { expectSuccess, installBub, interleave, median, nodeBaseline, printMachine, printRatio, printSamples, roundsArg, spawnTimed, tempDir, userEnv } from "../support/processes.ts";

/** The target for start → prompt ready set when the bench was written. */
const TARGET_MS = 150;
const runs = roundsArg(2, 15);
const { prefix, bin } = await installBub();
printMachine();

// (1) `bub chat` with open piped input: the clock stops when the welcome block (printed
// right before the prompt) is out, then `,quit` ends the session.
const home = tempDir("home");
const CHAT = "bub chat: start → prompt ready";
const samples = await interleave(
  [
    nodeBaseline(home),
    {
      label: CHAT,
      async run(rss) {
        const env = userEnv(home, { BUB_HOME: tempDir("bub-home") });
        const result = await spawnTimed(bin, ["chat"], { env, cwd: home, rss, timeoutMs: 30_000, stopWhen: (stdout) => (stdout.includes("',quit' to leave") ? ",quit\n" : undefined) });
        return expectSuccess(CHAT, result);
      },
    },
  ],
  { runs, warmup: 2, rssRuns: 3 },
);
printSamples(samples, 32);
printRatio(samples, CHAT, "node -e 0");
const ready = median(samples.get(CHAT)!.wallMs);
console.log(`${CHAT}: median ${ready.toFixed(1)} ms, target ≤ ${TARGET_MS} ms: ${ready <= TARGET_MS ? "met" : "NOT MET"}`);

// (2) 2,000 tokens in one second, ~4 characters each, as Markdown with paragraphs, lists and code.
const dist = join(prefix, "node_modules", "bub-ts", "dist", "channels", "cli");
const load = <T>(file: string) => import(pathToFileURL(join(dist, file)).href) as Promise<T>;
const [{ Terminal }, { TurnPrinter }, { loadMarkdownRenderer }] = await Promise.all([
  load<typeof import("../../src/channels/cli/terminal.ts")>("terminal.js"),
  load<typeof import("../../src/channels/cli/turn-printer.ts")>("turn-printer.js"),
  load<typeof import("../../src/channels/cli/markdown.ts")>("markdown.js"),
]);
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
