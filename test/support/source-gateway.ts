/**
 * `bub gateway --enable-channel telegram` run from the sources (src/bin/bub.ts) against a fake
 * Bot API, for tests below the end-to-end suite: a clean environment with the fake's default
 * bot token (`123:TEST`) and its API root, user 7 allowed and no debounce unless `env` says
 * otherwise.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeTelegram, type FakeTelegram } from "./fake-telegram.ts";
import { tempDir } from "./temp.ts";

const BIN = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));

/** A running gateway. */
export interface SourceGateway {
  readonly child: ChildProcess;
  /** What it wrote on stderr so far. */
  stderr(): string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** SIGKILL unless it has exited. */
  kill(): void;
}

/** Starts the gateway in `home` (its `.bub` is BUB_HOME); `env` adds to or overrides the defaults. */
export function startSourceGateway(home: string, telegram: FakeTelegram, env: Record<string, string> = {}): SourceGateway {
  const child = spawn(process.execPath, [BIN, "gateway", "--enable-channel", "telegram"], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      BUB_HOME: join(home, ".bub"),
      BUB_TELEGRAM_TOKEN: "123:TEST",
      BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
      BUB_TELEGRAM_ALLOW_USERS: "7",
      BUB_DEBOUNCE_SECONDS: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return {
    child,
    stderr: () => stderr,
    exited,
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/** What {@link withSourceGateway} gives its body. */
export interface SourceGatewayRun {
  readonly telegram: FakeTelegram;
  /** The temporary home the gateway runs in. */
  readonly dir: Awaited<ReturnType<typeof tempDir>>;
  readonly gateway: SourceGateway;
}

/**
 * Starts a fake Bot API (token `123:TEST`), a temporary home and the gateway in it with `env`,
 * runs `body` once the bot polls, then SIGTERMs the gateway, which must exit 0. The gateway is
 * killed, the fake closed and the home removed whatever happens.
 */
export async function withSourceGateway(env: Record<string, string>, body: (run: SourceGatewayRun) => Promise<void>): Promise<void> {
  const telegram = await startFakeTelegram({ token: "123:TEST" });
  const dir = await tempDir();
  const gateway = startSourceGateway(dir.path, telegram, env);
  try {
    await telegram.waitForCalls("deleteWebhook", 1);
    await body({ telegram, dir, gateway });
    gateway.child.kill("SIGTERM");
    assert.equal(await gateway.exited, 0, gateway.stderr());
  } finally {
    gateway.kill();
    await telegram.close();
    await dir.cleanup();
  }
}
