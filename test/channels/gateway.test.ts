import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { tempDir } from "../support/temp.ts";
import { startFakeTelegram } from "../support/fake-telegram.ts";
import { NO_CHANNELS } from "../../src/builtin/commands/gateway.ts";

const run = promisify(execFile);
const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));
const echoPlugin = fileURLToPath(new URL("./fixtures/echo-model.ts", import.meta.url));

describe("bub gateway", () => {
  it("exits 1 with a clear message when no channel is enabled", async () => {
    const dir = await tempDir();
    try {
      const failure = await run(process.execPath, [bin, "gateway"], { cwd: dir.path, env: { PATH: process.env.PATH, HOME: dir.path, BUB_HOME: join(dir.path, ".bub") } }).then(
        () => assert.fail("bub gateway should fail"),
        (error: { code: number; stderr: string }) => error,
      );
      assert.equal(failure.code, 1);
      assert.equal(failure.stderr, `${NO_CHANNELS}\n`);
    } finally {
      await dir.cleanup();
    }
  });

  it("serves Telegram against the Bot API and stops gracefully on SIGTERM", async () => {
    const telegram = await startFakeTelegram({ token: "123:TEST" });
    const dir = await tempDir();
    const child = spawn(process.execPath, [bin, "gateway", "--enable-channel", "telegram"], {
      cwd: dir.path,
      env: {
        PATH: process.env.PATH,
        HOME: dir.path,
        BUB_HOME: join(dir.path, ".bub"),
        BUB_PLUGINS: echoPlugin,
        BUB_TELEGRAM_TOKEN: "123:TEST",
        BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
        BUB_TELEGRAM_ALLOW_USERS: "7",
        BUB_DEBOUNCE_SECONDS: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");
    try {
      await telegram.waitForCalls("deleteWebhook", 1);
      telegram.sendText({ chatId: 7, userId: 7, text: "ping" });
      const [reply] = await telegram.waitForCalls("sendMessage", 1);
      assert.equal(reply!.payload.chat_id, "7");
      assert.match(String(reply!.payload.text), /^echo /);
      child.kill("SIGTERM");
      const [code] = await exited;
      assert.equal(code, 0, stderr);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await telegram.close();
      await dir.cleanup();
    }
  });
});
