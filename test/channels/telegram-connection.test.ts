import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { delivered, gateway, logs, NO_PROXY_ENV, startAlone, startProxy, telegram, TEST_RETRY, TOKEN, useFakeTelegram, withEnv } from "./telegram-support.ts";

useFakeTelegram();

describe("Telegram channel against the Bot API", () => {
  it("fails to start, within the deadline, when the Bot API cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await withEnv(NO_PROXY_ENV, async () => {
      await assert.rejects(startAlone({ BUB_TELEGRAM_API_ROOT: `http://127.0.0.1:${port}` }, { ...TEST_RETRY, deadlineSeconds: 0.5 }), (error: Error) => {
        assert.match(error.message, new RegExp(`^Could not reach the Telegram Bot API at http://127\\.0\\.0\\.1:${port} via direct \\(`));
        assert.doesNotMatch(error.message, /123:TEST/, "the token is not in the message");
        return true;
      });
    });
  });
});

describe("Telegram through a proxy", () => {
  it("sends getMe, sendMessage and file downloads through BUB_TELEGRAM_PROXY", async () => {
    const proxy = await startProxy();
    try {
      const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7", BUB_TELEGRAM_PROXY: proxy.url });
      const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 9]);
      telegram.addFile("pic", bytes);
      telegram.sendMessage({ chatId: 7, from: { id: 7 }, fields: { photo: [{ file_id: "pic", file_unique_id: "pic", width: 1, height: 1, file_size: bytes.byteLength }] } });
      await telegram.waitForCalls("sendMessage", 1);
      await bot.close();
      const { port } = new URL(telegram.apiRoot);
      assert.ok(proxy.tunnels.every((target) => target === `127.0.0.1:${port}`) && proxy.tunnels.length > 0);
      for (const line of [`POST /bot${TOKEN}/getMe`, `POST /bot${TOKEN}/getFile`, `GET /file/bot${TOKEN}/photos/pic.jpg`, `POST /bot${TOKEN}/sendMessage`]) {
        assert.ok(proxy.requests.includes(line), `${line} went through the proxy (saw ${proxy.requests.join(", ")})`);
      }
      assert.equal(telegram.downloads, 1);
      assert.ok(logs.some((log) => log.message.includes(`(api ${telegram.apiRoot}, proxy ${proxy.url})`)));
    } finally {
      await proxy.close();
    }
  });

  it("uses HTTP_PROXY from the environment, and NO_PROXY bypasses it", async () => {
    const proxy = await startProxy();
    try {
      await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: proxy.url }, async () => {
        const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
        telegram.sendText({ chatId: 7, userId: 7, text: "via env" });
        await telegram.waitForCalls("sendMessage", 1);
        await bot.close();
      });
      assert.ok(proxy.requests.includes(`POST /bot${TOKEN}/sendMessage`));
      const seen = proxy.requests.length;
      await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" }, async () => {
        const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
        telegram.sendText({ chatId: 7, userId: 7, text: "direct" });
        await telegram.waitForCalls("sendMessage", 2);
        await bot.close();
      });
      assert.equal(proxy.requests.length, seen, "nothing more went through the proxy");
      assert.deepEqual(delivered(), ["echo: via env", "echo: direct"]);
    } finally {
      await proxy.close();
    }
  });

  it("refuses a SOCKS proxy with a clear message, sending nothing", async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      await assert.rejects(startAlone({ BUB_TELEGRAM_PROXY: "socks5://user:secret@127.0.0.1:1080" }), (error: Error) => {
        assert.match(error.message, /BUB_TELEGRAM_PROXY is a SOCKS proxy \(socks5:\/\/127\.0\.0\.1:1080\), and SOCKS proxies are not supported: use an HTTP proxy/);
        assert.doesNotMatch(error.message, /secret/);
        return true;
      });
      await withEnv({ HTTPS_PROXY: "socks5h://127.0.0.1:1080" }, async () => {
        await assert.rejects(startAlone({}), /HTTPS_PROXY is a SOCKS proxy/);
      });
    });
    assert.equal(telegram.calls.length, 0);
  });
});
