// `npm run demo`: one scripted `bub run` turn with a tool call against the fake
// OpenAI-compatible server from test/support, so the whole pipeline can be watched without an
// API key. It prints the command, its output, and the tape the turn wrote.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { reply, startFakeOpenAI } from "../test/support/fake-openai.ts";

const bin = fileURLToPath(new URL("../src/bin/bub.ts", import.meta.url));
const workspace = mkdtempSync(join(tmpdir(), "bub-demo-"));
const home = join(workspace, ".bub");
writeFileSync(join(workspace, "notes.txt"), "- water the plants\n- call Ada about the release\n");

const server = await startFakeOpenAI();
// Step 1: the model asks for fs.read; step 2: it answers from the file.
server.script(
  reply.toolCalls([{ id: "call_demo", name: "fs_read", arguments: JSON.stringify({ path: "notes.txt" }) }], { text: "Let me look at your notes." }),
  (request) => {
    const tool = request.body.messages.find((message) => message.role === "tool");
    return reply.text(`Your notes list two things:\n\n${String(tool?.content ?? "(nothing)")}`);
  },
);

const message = "what is on my list?";
const env = { ...process.env, BUB_HOME: home, BUB_MODEL: "fake:demo-model", BUB_API_BASE: server.url, BUB_API_KEY: "demo-key" };
console.log(`$ BUB_API_BASE=${server.url} BUB_MODEL=fake:demo-model bub run ${JSON.stringify(message)}\n`);
const code = await new Promise<number>((resolve) => {
  const child = spawn(process.execPath, [bin, "run", message], { cwd: workspace, env, stdio: ["ignore", "inherit", "inherit"] });
  child.on("close", (status) => resolve(status ?? 1));
});

console.log(`\nexit code ${code}; the model was called ${server.requests.length} times. The session tape now holds:`);
const tapes = join(home, "tapes");
for (const file of readdirSync(tapes).filter((name) => name.endsWith(".jsonl") && !name.startsWith(".") && !name.includes("__sidecar__"))) {
  for (const line of readFileSync(join(tapes, file), "utf8").split("\n").filter(Boolean)) {
    const entry = JSON.parse(line) as { id: number; kind: string; payload: Record<string, unknown> };
    const detail =
      entry.kind === "event" || entry.kind === "anchor"
        ? String(entry.payload.name)
        : entry.kind === "message"
          ? `${String(entry.payload.role)}: ${JSON.stringify(entry.payload.content).slice(0, 60)}`
          : entry.kind === "tool_call"
            ? JSON.stringify((entry.payload.calls as { function: unknown }[]).map((call) => call.function))
            : entry.kind === "system"
              ? `(system prompt, ${String(entry.payload.content).length} chars)`
              : JSON.stringify(entry.payload).slice(0, 70);
    console.log(`  #${String(entry.id).padStart(2)} ${entry.kind.padEnd(11)} ${detail}`);
  }
}
await server.close();
rmSync(workspace, { recursive: true, force: true });
process.exitCode = code;
