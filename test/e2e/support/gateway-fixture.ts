/**
 * One `describe()` block's `bub gateway` set-up on the installed package: a fake model server
 * for the block, and for each test a fresh fake Bot API, a temporary home, and the gateway
 * that test starts (killed after it). Alice (user and private chat 7) is the allowed user.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, before, beforeEach } from "node:test";
import { startFakeOpenAI, type FakeOpenAI } from "../../support/fake-openai.ts";
import { startFakeTelegram, type FakeTelegram } from "../../support/fake-telegram.ts";
import { installedPackage, tempHome } from "./installed.ts";
import { readyWithin, startBub, type LiveBub } from "./live.ts";

export const GATEWAY_TOKEN = "123456:E2E-TOKEN";
/** The allowed user, whose private chat has the same id. */
export const ALICE = 7;

/** What a test of the block uses (read these only inside tests and hooks). */
export interface GatewayFixture {
  readonly openai: FakeOpenAI;
  readonly telegram: FakeTelegram;
  /** The temporary home folder (the working folder of `bub`). */
  readonly home: string;
  /** `<home>/.bub`. */
  readonly bubHome: string;
  /** The gateway's environment: fake model and Bot API, Alice allowed, no debounce; `extra` on top. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Starts `bub gateway` and resolves once the bot polls (rejects if it exits first). */
  start(extra?: Record<string, string>): Promise<LiveBub>;
  /** SIGTERM, and the gateway must exit 0 within `timeoutMs`. */
  stop(live: LiveBub, timeoutMs?: number): Promise<void>;
}

/** Registers the block's hooks and returns its {@link GatewayFixture}. */
export function useGatewayFixture(): GatewayFixture {
  let openai: FakeOpenAI | null = null;
  let telegram: FakeTelegram | null = null;
  let home: Awaited<ReturnType<typeof tempHome>> | null = null;
  let gateway: LiveBub | null = null;
  const need = <T>(value: T | null, what: string): T => {
    if (value === null) throw new Error(`the gateway fixture's ${what} is used outside a test`);
    return value;
  };
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai?.close());
  beforeEach(async () => {
    need(openai, "model server").requests.length = 0;
    telegram = await startFakeTelegram({ token: GATEWAY_TOKEN });
    home = await tempHome();
  });
  afterEach(async () => {
    gateway?.kill();
    gateway = null;
    await telegram?.close();
    await home?.cleanup();
    assert.equal(need(openai, "model server").pending(), 0, "every scripted reply was used");
  });

  const fixture: GatewayFixture = {
    get openai() {
      return need(openai, "model server");
    },
    get telegram() {
      return need(telegram, "Bot API");
    },
    get home() {
      return need(home, "home").path;
    },
    get bubHome() {
      return join(need(home, "home").path, ".bub");
    },
    env: (extra = {}) => ({
      BUB_HOME: fixture.bubHome,
      BUB_MODEL: "local:any",
      BUB_API_BASE: fixture.openai.url,
      BUB_TELEGRAM_TOKEN: GATEWAY_TOKEN,
      BUB_TELEGRAM_API_ROOT: fixture.telegram.apiRoot,
      BUB_TELEGRAM_ALLOW_USERS: String(ALICE),
      BUB_DEBOUNCE_SECONDS: "0",
      ...extra,
    }),
    async start(extra = {}) {
      const started = await startBub(["gateway"], { home: fixture.home, env: fixture.env(extra) });
      gateway = started;
      await readyWithin(started, fixture.telegram.waitForCalls("deleteWebhook", 1), 15_000, "the bot to start polling", "bub gateway exited before it polled");
      return started;
    },
    async stop(live, timeoutMs = 8_000) {
      live.child.kill("SIGTERM");
      const result = await live.exited(timeoutMs);
      assert.equal(result.signal, null, `bub gateway died of ${result.signal}\n${result.stderr}`);
      assert.equal(result.code, 0, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    },
  };
  return fixture;
}
