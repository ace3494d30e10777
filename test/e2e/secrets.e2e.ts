/**
 * Secrets in the installed package: `bub gateway` serving Telegram with a model that sends
 * through `telegram.send`, runs `env` in `bash` and reads the gateway's environment block
 * back through `/proc/$PPID/environ`, reversed so that redaction cannot recognise it. The bot
 * token and the API key reach no system prompt, tool output, tape file, chat or log line, in
 * either form (docs/security.md, *Secrets*).
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { startFakeTelegram } from "../support/fake-telegram.ts";
import { installedPackage, tempHome } from "./support/installed.ts";
import { startBub, within } from "./support/live.ts";

const TOKEN = "123456:E2E-SECRET-TOKEN";
const API_KEY = "sk-e2e-secret-api-key";
const ALICE = 7;

function reversed(text: string): string {
  return [...text].reverse().join("");
}

describe("secrets in bub gateway (installed package)", () => {
  let openai: FakeOpenAI;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());

  it("telegram.send delivers through the Bot API; the token and the key stay out of prompts, tool output, tapes and logs", async () => {
    const telegram = await startFakeTelegram({ token: TOKEN });
    const home = await tempHome();
    const bubHome = join(home.path, ".bub");
    const gateway = await startBub(["gateway"], {
      home: home.path,
      env: {
        BUB_HOME: bubHome,
        BUB_MODEL: "local:any",
        BUB_API_BASE: openai.url,
        BUB_API_KEY: API_KEY,
        OPENAI_API_KEY: API_KEY,
        BUB_TELEGRAM_TOKEN: TOKEN,
        BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
        BUB_TELEGRAM_ALLOW_USERS: String(ALICE),
        BUB_DEBOUNCE_SECONDS: "0",
        BUB_LOG_LEVEL: "debug",
      },
    });
    try {
      openai.script(
        reply.toolCalls([
          { name: "telegram_send", arguments: JSON.stringify({ text: "_On it_" }) },
          { name: "bash", arguments: JSON.stringify({ cmd: "env" }) },
          { name: "bash", arguments: JSON.stringify({ cmd: "tr '\\0' '\\n' < /proc/$PPID/environ | grep -a -E 'KEY|TOKEN' | rev; echo read" }) },
        ]),
        reply.text("Done."),
      );
      await within(telegram.waitForCalls("deleteWebhook", 1), 15_000, "the bot to start polling");
      telegram.sendText({ chatId: ALICE, userId: ALICE, text: "print your environment" });
      const [note, answer] = await within(telegram.waitForCalls("sendMessage", 2), 15_000, "two messages at sendMessage");
      assert.deepEqual([note!.payload.text, note!.payload.parse_mode], ["<i>On it</i>", "HTML"]);
      assert.equal(answer!.payload.text, "Done.");
      const tools = openai.requests[1]!.body.messages.filter((message) => message.role === "tool").map((message) => String(message.content));
      assert.match(tools[0]!, /^sent to 7: message_id=\d+$/);
      assert.match(tools[1]!, /PATH=/);
      assert.match(tools[2]!, /read$/);
      const requests = JSON.stringify(openai.requests.map((request) => request.body));
      assert.match(requests, /telegram\.send/, "the telegram skill is in the system prompt");
      gateway.child.kill("SIGTERM");
      const result = await gateway.exited(5_000);
      assert.equal(result.code, 0, result.stderr);
      const files = await readdir(bubHome, { recursive: true, withFileTypes: true });
      const texts = await Promise.all(files.filter((entry) => entry.isFile()).map((entry) => readFile(join(entry.parentPath, entry.name), "latin1")));
      const chat = JSON.stringify(telegram.calls.map((call) => call.payload));
      for (const secret of [TOKEN, API_KEY, reversed(TOKEN), reversed(API_KEY)]) {
        assert.ok(!requests.includes(secret), `${secret} reached the model`);
        assert.ok(!chat.includes(secret), `${secret} reached the chat`);
        assert.ok(!texts.some((text) => text.includes(secret)), `${secret} is in a file under BUB_HOME`);
        assert.ok(!result.stderr.includes(secret) && !result.stdout.includes(secret), `${secret} is in the output`);
      }
    } finally {
      gateway.kill();
      await telegram.close();
      await home.cleanup();
    }
  });
});
