import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createBub } from "../../src/builtin/create.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { tempDir } from "../support/temp.ts";

const execute = promisify(execFile);
const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));

describe("a real turn through the builtin plugin", () => {
  const server = useFakeOpenAI();

  function env(home: string): Record<string, string> {
    return { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-secret-value", BUB_HOME: home };
  }

  async function tapeLines(home: string): Promise<Record<string, unknown>[]> {
    const dir = join(home, "tapes");
    const files = (await readdir(dir)).filter((name) => name.endsWith(".jsonl"));
    const text = (await Promise.all(files.map((name) => readFile(join(dir, name), "utf8")))).join("");
    return text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it("processInbound runs the agent, writes the file tape and renders the outbound", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const framework = await createBub({ workspace: dir.path, home, env: env(home) });
      server.script(reply.text("Hi from the fake model."));
      const message = new ChannelMessage({ sessionId: "cli:local", channel: "cli", chatId: "local", content: "hello", context: { sender_id: "human" } });
      const result = await framework.running(() => framework.processInbound(message));
      assert.equal(result.modelOutput, "Hi from the fake model.");
      assert.equal(result.outbounds[0]?.content, "Hi from the fake model.");
      const sent = server.requests[0]!.body.messages.at(-1)!;
      assert.match(String(sent.content), /^sender_id=human\|channel=\$cli\|chat_id=local\n---Date: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d---\nhello$/);
      const lines = await tapeLines(home);
      assert.ok(lines.some((line) => line.kind === "message" && (line.payload as { role: string }).role === "assistant"));
      assert.ok(!JSON.stringify(lines).includes("sk-secret-value"), "the API key never reaches the tape");
    } finally {
      await dir.cleanup();
    }
  });

  it("uses the SQLite store when BUB_TAPE_STORE=sqlite, and spills oversized tool results to the sidecar", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const framework = await createBub({ workspace: dir.path, home, env: { ...env(home), BUB_TAPE_STORE: "sqlite", BUB_SPILL_THRESHOLD: "10" } });
      await import("node:fs/promises").then((fs) => fs.writeFile(join(dir.path, "big.txt"), "line of text\n".repeat(20)));
      server.script(reply.toolCalls([{ name: "fs_read", arguments: '{"path":"big.txt"}' }]), reply.text("read it"));
      await framework.running(() => framework.processInbound({ session_id: "s", content: "read big.txt" }));
      const toolMessage = server.requests[1]!.body.messages.find((message) => message.role === "tool");
      assert.match(String(toolMessage?.content), /^\[tool output spilled: 259 bytes in 1 chunks; handle: [0-9a-f]{32}\]/);
      const { DatabaseSync } = await import("node:sqlite");
      const db = new DatabaseSync(join(home, "tapes.sqlite3"));
      const tapes = db.prepare("SELECT DISTINCT tape FROM tape_entries").all().map((row) => String(row.tape));
      db.close();
      assert.ok(tapes.some((name) => name.endsWith("__sidecar__spill")), `sidecar tape written: ${tapes.join(", ")}`);
    } finally {
      await dir.cleanup();
    }
  });

  it("restores a session model switched on the tape, and a message context model overrides it", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const framework = await createBub({ workspace: dir.path, home, env: env(home) });
      server.script(reply.text("two"), reply.text("three"));
      await framework.running(() => framework.processInbound({ session_id: "s", content: ",model model_id=fake:switched" }));
      await framework.running(() => framework.processInbound({ session_id: "s", content: "hi" }));
      assert.equal(server.requests.at(-1)!.body.model, "switched");
      await framework.running(() => framework.processInbound({ session_id: "s", content: "hi", context: { model: "fake:override" } }));
      assert.equal(server.requests.at(-1)!.body.model, "override");
    } finally {
      await dir.cleanup();
    }
  });

  async function bub(args: string[], home: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const result = await execute(process.execPath, [bin, ...args], { cwd, env: { PATH: process.env.PATH, HOME: cwd, ...env(home) } });
      return { code: 0, stdout: result.stdout, stderr: result.stderr };
    } catch (error) {
      const failure = error as { code: number; stdout: string; stderr: string };
      return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
    }
  }

  it("bub run prints each outbound under [channel:chat_id] and exits 0", async () => {
    const dir = await tempDir();
    try {
      server.script(reply.toolCalls([{ name: "fs_read", arguments: JSON.stringify({ path: "notes.txt" }) }]), reply.text("The notes say: buy milk."));
      await import("node:fs/promises").then((fs) => fs.writeFile(join(dir.path, "notes.txt"), "buy milk\n"));
      const result = await bub(["run", "what do my notes say?"], join(dir.path, ".bub"), dir.path);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "[cli:local]\nThe notes say: buy milk.\n");
      const toolMessage = server.requests[1]!.body.messages.find((message) => message.role === "tool");
      assert.equal(toolMessage?.content, "buy milk");
    } finally {
      await dir.cleanup();
    }
  });

  it("bub run answers a failed comma command once, as an error, with exit 1 and no model call", async () => {
    const dir = await tempDir();
    try {
      const result = await bub(["run", ",fs_read 'x"], join(dir.path, ".bub"), dir.path);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, "", "nothing on stdout: scripts read only answers there");
      assert.equal(result.stderr, "bub: No closing quotation: a single quote is not closed — check the command and its arguments (`,help` lists them)\n");
      assert.equal(server.requests.length, 0);
    } finally {
      await dir.cleanup();
    }
  });

  it("bub run exits 1 with a readable error when the model refuses the key", async () => {
    const dir = await tempDir();
    try {
      server.script(reply.error(401, "Incorrect API key provided."));
      const result = await bub(["run", "hi"], join(dir.path, ".bub"), dir.path);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /^bub: \S+ returned HTTP 401: Incorrect API key provided — check the API key \(\w+ or BUB_API_KEY\)\n$/);
      assert.doesNotMatch(result.stdout + result.stderr, /at .*\.ts:\d+/, "no stack trace without BUB_DEBUG");
      assert.doesNotMatch(result.stdout + result.stderr, /sk-secret-value/);
    } finally {
      await dir.cleanup();
    }
  });
});
