import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { withSourceGateway } from "../support/source-gateway.ts";
import { tempDir } from "../support/temp.ts";
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

  it("serves Telegram against the Bot API and stops gracefully on SIGTERM", () =>
    withSourceGateway({ BUB_PLUGINS: echoPlugin }, async ({ telegram }) => {
      telegram.sendText({ chatId: 7, userId: 7, text: "ping" });
      const [reply] = await telegram.waitForCalls("sendMessage", 1);
      assert.equal(reply!.payload.chat_id, "7");
      assert.match(String(reply!.payload.text), /^echo /);
    }));
});
