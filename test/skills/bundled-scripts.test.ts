// The bundled skills' Node scripts: the Telegram scripts against a fake Bot API on 127.0.0.1,
// and the skill-creator's scaffold and validate commands.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { tempDir } from "../support/temp.ts";

const SKILLS = join(import.meta.dirname, "..", "..", "skills");

function runScript(script: string, args: string[], options: { stdin?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: options.cwd, env: { ...process.env, BUB_TELEGRAM_TOKEN: "", ...options.env }, stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

interface ApiCall {
  path: string;
  body: Record<string, unknown>;
}

describe("telegram skill scripts", () => {
  const calls: ApiCall[] = [];
  let failReplyOnce = false;
  let rejectEntities = false;
  const server = createServer((request, response) => {
    let raw = "";
    request.on("data", (chunk: Buffer) => (raw += chunk.toString()));
    request.on("end", () => {
      const body = JSON.parse(raw || "{}") as Record<string, unknown>;
      calls.push({ path: request.url ?? "", body });
      const reply = (status: number, payload: unknown) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload));
      if (failReplyOnce && body.reply_to_message_id !== undefined) {
        failReplyOnce = false;
        return reply(400, { ok: false, error_code: 400, description: "Bad Request: message to be replied not found" });
      }
      if (rejectEntities && body.parse_mode === "HTML") return reply(400, { ok: false, error_code: 400, description: "Bad Request: can't parse entities" });
      reply(200, { ok: true, result: { message_id: 100 + calls.length } });
    });
  });
  let env: Record<string, string>;

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    env = { BUB_TELEGRAM_API_ROOT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, BUB_TELEGRAM_TOKEN: "123:abc" };
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const send = join(SKILLS, "telegram/scripts/telegram-send.mjs");
  const edit = join(SKILLS, "telegram/scripts/telegram-edit.mjs");
  const rich = join(SKILLS, "telegram/scripts/telegram-rich.mjs");

  it("sends Markdown from stdin as Telegram HTML, as a reply", async () => {
    calls.length = 0;
    const result = await runScript(send, ["--chat-id", "42", "--reply-to", "7", "--message", "-"], { env, stdin: "**Done** with `a<b` & $HOME\n- item\n" });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "sent to 42: message_id=101\n");
    assert.equal(calls[0]!.path, "/bot123:abc/sendMessage");
    assert.deepEqual(calls[0]!.body, { chat_id: "42", text: "<b>Done</b> with <code>a&lt;b</code> &amp; $HOME\n• item", parse_mode: "HTML", reply_to_message_id: 7 });
  });

  it("sends again without reply_to when Telegram refuses the reply", async () => {
    calls.length = 0;
    failReplyOnce = true;
    const result = await runScript(send, ["-c", "42", "-r", "7", "-m", "hello"], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.body.reply_to_message_id, undefined);
  });

  it("falls back to plain text when Telegram cannot parse the formatting", async () => {
    calls.length = 0;
    rejectEntities = true;
    try {
      const result = await runScript(send, ["-c", "42", "-m", "**x**"], { env });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(calls[1]!.body, { chat_id: "42", text: "**x**" });
    } finally {
      rejectEntities = false;
    }
  });

  it("splits messages over 4096 characters", async () => {
    calls.length = 0;
    const text = Array.from({ length: 120 }, (_, index) => `line ${index} ${"x".repeat(60)}`).join("\n");
    const result = await runScript(send, ["-c", "42", "--format", "plain", "-m", "-"], { env, stdin: text });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(calls.length, 3);
    assert.ok(calls.every((call) => String(call.body.text).length <= 4096));
    assert.equal(calls.map((call) => call.body.text).join("\n"), text);
  });

  it("mentions a bot it does not reply to", async () => {
    calls.length = 0;
    await runScript(send, ["-c", "42", "--source-is-bot", "--source-username", "otherbot", "-m", "hi"], { env });
    assert.equal(calls[0]!.body.text, "/bot@otherbot hi");
  });

  it("edits a message", async () => {
    calls.length = 0;
    const result = await runScript(edit, ["--chat-id", "42", "--message-id", "9", "--text", "-"], { env, stdin: "_final_ result" });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(calls[0]!.path, "/bot123:abc/editMessageText");
    assert.deepEqual(calls[0]!.body, { chat_id: "42", message_id: 9, text: "<i>final</i> result", parse_mode: "HTML" });
  });

  it("sends and edits rich messages", async () => {
    calls.length = 0;
    const dir = await tempDir("bub-rich-");
    try {
      const file = join(dir.path, "payload.html");
      writeFileSync(file, "<h2>Title</h2>\n");
      assert.equal((await runScript(rich, ["-c", "42", "--html-file", file, "-r", "3"], { env })).code, 0);
      assert.equal(calls[0]!.path, "/bot123:abc/sendRichMessage");
      assert.deepEqual(calls[0]!.body, { chat_id: "42", rich_message: JSON.stringify({ html: "<h2>Title</h2>" }), reply_to_message_id: 3 });
      assert.equal((await runScript(rich, ["-c", "42", "--markdown", "## T", "--edit", "5"], { env })).code, 0);
      assert.deepEqual(calls[1]!.body, { chat_id: "42", message_id: 5, rich_message: JSON.stringify({ markdown: "## T" }) });
    } finally {
      await dir.cleanup();
    }
  });

  it("explains missing tokens, arguments and API failures", async () => {
    const noToken = await runScript(send, ["-c", "42", "-m", "hi"], { env: { BUB_TELEGRAM_API_ROOT: env.BUB_TELEGRAM_API_ROOT! } });
    assert.equal(noToken.code, 1);
    assert.equal(noToken.stderr, "error: no bot token: set BUB_TELEGRAM_TOKEN or pass --token\n");
    assert.equal((await runScript(send, ["-m", "hi"], { env })).stderr, "error: --chat-id is required\n");
    assert.equal((await runScript(rich, ["-c", "1"], { env })).stderr, "error: give exactly one of --html/--html-file or --markdown/--markdown-file\n");
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const deadRoot = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const dead = await runScript(send, ["-c", "42", "-m", "hi"], { env: { ...env, BUB_TELEGRAM_API_ROOT: deadRoot } });
    assert.equal(dead.code, 1);
    assert.match(dead.stderr, /^error: sendMessage failed: ECONNREFUSED/);
  });
});

describe("skill-creator script", () => {
  const tool = join(SKILLS, "skill-creator/scripts/skill-tool.mjs");

  it("scaffolds a skill that validates, and refuses to overwrite it", async () => {
    const dir = await tempDir("bub-creator-");
    try {
      const created = await runScript(tool, ["init", "release-notes", "--description", "Write release notes. Use when asked."], { cwd: dir.path });
      assert.equal(created.code, 0, created.stderr);
      const file = join(dir.path, ".agents/skills/release-notes/SKILL.md");
      assert.equal(created.stdout, `created ${file}\n`);
      assert.match(readFileSync(file, "utf8"), /^---\nname: release-notes\ndescription: "Write release notes. Use when asked."\n---\n/);
      assert.equal((await runScript(tool, ["validate", ".agents/skills/release-notes"], { cwd: dir.path })).code, 0);
      const again = await runScript(tool, ["init", "release-notes"], { cwd: dir.path });
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already exists/);
    } finally {
      await dir.cleanup();
    }
  });

  it("lists every problem of an invalid skill", async () => {
    const dir = await tempDir("bub-creator-");
    try {
      mkdirSync(join(dir.path, "my-skill"));
      writeFileSync(join(dir.path, "my-skill", "SKILL.md"), "---\nname: other\nmetadata:\n  v: 1\n---\n");
      const result = await runScript(tool, ["validate", join(dir.path, "my-skill")]);
      assert.equal(result.code, 1);
      const file = join(dir.path, "my-skill", "SKILL.md");
      assert.deepEqual(result.stderr.trim().split("\n"), [
        `${file}: 'name' "other" does not match its directory name "my-skill"`,
        `${file}: 'description' is missing, empty or not a string`,
        `${file}: 'metadata.v' must be a string (quote it in the YAML)`,
        `${file}: the body is empty: write the instructions after the frontmatter`,
      ]);
    } finally {
      await dir.cleanup();
    }
  });

  it("validates the bundled skills", async () => {
    for (const name of ["telegram", "skill-creator"]) {
      const result = await runScript(tool, ["validate", join(SKILLS, name)]);
      assert.equal(result.code, 0, result.stderr);
    }
  });
});
