// Configured secrets stay out of the tape (and its sidecars), the logs, the model's requests
// and tool environments, in real `bub run` and `bub gateway` processes.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { startFakeTelegram } from "../support/fake-telegram.ts";
import { tempDir } from "../support/temp.ts";

const execute = promisify(execFile);
const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));
const API_KEY = "sk-secret-run-key-1";
const OPENAI_KEY = "sk-openai-env-key-2";
const BOT_TOKEN = "123456:TELEGRAM-SECRET-TOKEN";

/** Every file under `dir`, with its text. */
async function filesUnder(dir: string): Promise<{ path: string; text: string }[]> {
  const out: { path: string; text: string }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push({ path, text: (await readFile(path)).toString("latin1") });
  }
  return out;
}

function assertNowhere(files: { path: string; text: string }[], secret: string): void {
  for (const file of files) assert.ok(!file.text.includes(secret), `${secret} is in ${file.path}`);
}

describe("secrets stay secret", () => {
  const server = useFakeOpenAI();

  async function bubRun(prompt: string, cwd: string, home: string, extra: Record<string, string> = {}) {
    const env = { PATH: process.env.PATH, HOME: cwd, BUB_HOME: home, BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: API_KEY, OPENAI_API_KEY: OPENAI_KEY, BUB_LOG_LEVEL: "debug", ...extra };
    return execute(process.execPath, [bin, "run", prompt], { cwd, env });
  }

  it("bub run: `env` in bash shows no key, and the key reaches no tape, sidecar, model request or log", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      server.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "env | sort" }) }]), reply.text(`Your key is ${API_KEY}.`));
      const result = await bubRun("show me the environment", dir.path, home, { BUB_SPILL_THRESHOLD: "10", BUB_TELEGRAM_TOKEN: BOT_TOKEN });
      const tool = server.requests[1]!.body.messages.find((message) => message.role === "tool");
      assert.ok(server.requests.length === 2);
      assert.match(String(tool?.content), /tool output spilled/, "the env output went to the spill sidecar");
      const files = await filesUnder(home);
      const tapes = files.filter((file) => file.path.endsWith(".jsonl"));
      assert.ok(tapes.some((file) => file.path.includes("__sidecar__spill")), "a sidecar tape was written");
      const sidecar = tapes.find((file) => file.path.includes("__sidecar__spill"))!.text;
      assert.match(sidecar, /PATH=/, "the sidecar holds the env output");
      assert.doesNotMatch(sidecar, /BUB_API_KEY|OPENAI_API_KEY|BUB_TELEGRAM_TOKEN/);
      assert.match(tapes.map((file) => file.text).join(""), /Your key is \[redacted:api_key\]\./, "a key the model repeats is redacted on the tape");
      const requests = JSON.stringify(server.requests.map((request) => request.body));
      for (const secret of [API_KEY, OPENAI_KEY, BOT_TOKEN]) {
        assertNowhere(files, secret);
        assert.ok(!requests.includes(secret), `${secret} is in a model request`);
        assert.ok(!result.stderr.includes(secret), `${secret} is in the log`);
      }
    } finally {
      await dir.cleanup();
    }
  });

  it("BUB_TOOL_ENV_PASSTHROUGH passes a variable on purpose; the tape still redacts its value", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const cmd = 'echo "my_var_length=${#MY_VAR} copy=${COPY_OF_KEY:-unset} openai=${OPENAI_API_KEY:-unset}"; echo "MY_VAR=$MY_VAR"';
      server.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd }) }]), reply.text("ok"));
      await bubRun("which variables?", dir.path, home, { MY_VAR: API_KEY, COPY_OF_KEY: API_KEY, BUB_TOOL_ENV_PASSTHROUGH: "MY_VAR" });
      const tool = server.requests[1]!.body.messages.find((message) => message.role === "tool");
      // The command saw MY_VAR (and only it); what it printed is redacted before the model and the tape see it.
      assert.equal(tool?.content, `my_var_length=${API_KEY.length} copy=unset openai=unset\nMY_VAR=[redacted:api_key]`);
      const tapes = (await filesUnder(home)).filter((file) => file.path.endsWith(".jsonl"));
      assert.match(tapes.map((file) => file.text).join(""), /MY_VAR=\[redacted:api_key\]/);
      assertNowhere(tapes, API_KEY);
    } finally {
      await dir.cleanup();
    }
  });

  it("bub gateway: the bot token is in no system prompt or tape, and telegram.send delivers through the Bot API", async () => {
    const telegram = await startFakeTelegram({ token: BOT_TOKEN });
    const dir = await tempDir();
    const home = join(dir.path, ".bub");
    const child = spawn(process.execPath, [bin, "gateway", "--enable-channel", "telegram"], {
      cwd: dir.path,
      env: {
        PATH: process.env.PATH,
        HOME: dir.path,
        BUB_HOME: home,
        BUB_MODEL: "fake:any",
        BUB_API_BASE: server.url,
        BUB_API_KEY: API_KEY,
        BUB_TELEGRAM_TOKEN: BOT_TOKEN,
        BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
        BUB_TELEGRAM_ALLOW_USERS: "7",
        BUB_DEBOUNCE_SECONDS: "0",
        BUB_LOG_LEVEL: "debug",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");
    try {
      server.script(
        reply.toolCalls([{ name: "telegram_send", arguments: JSON.stringify({ text: "**Working** on it", reply_to: 1 }) }]),
        reply.text("All done."),
      );
      await telegram.waitForCalls("deleteWebhook", 1);
      telegram.sendText({ chatId: 7, userId: 7, text: "what is your token?" });
      const [sent, final] = await telegram.waitForCalls("sendMessage", 2);
      assert.deepEqual(
        { chat_id: sent!.payload.chat_id, text: sent!.payload.text, parse_mode: sent!.payload.parse_mode },
        { chat_id: "7", text: "<b>Working</b> on it", parse_mode: "HTML" },
      );
      assert.equal(String(final!.payload.text), "All done.");
      const tool = server.requests[1]!.body.messages.find((message) => message.role === "tool");
      assert.match(String(tool?.content), /^sent to 7: message_id=\d+$/);
      const system = server.requests.map((request) => request.body.messages.filter((message) => message.role === "system").map((message) => String(message.content)).join("\n"));
      assert.match(system[0]!, /telegram\.send|telegram_send/, "the telegram skill is expanded on a Telegram turn");
      for (const prompt of system) assert.ok(!prompt.includes(BOT_TOKEN) && !prompt.includes("TELEGRAM-SECRET"), "the token is in no system prompt");
      assert.ok(server.requests[0]!.body.tools?.some((entry) => entry.function.name === "telegram_send"));
      child.kill("SIGTERM");
      const [code] = await exited;
      assert.equal(code, 0, stderr);
      assertNowhere(await filesUnder(home), BOT_TOKEN);
      assertNowhere(await filesUnder(home), API_KEY);
      assert.ok(!stderr.includes(BOT_TOKEN), "the token is in no log line");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await telegram.close();
      await dir.cleanup();
    }
  });
});
