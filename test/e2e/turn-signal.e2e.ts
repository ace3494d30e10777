/**
 * A plugin of the installed package whose `runModel` waits on its typed turn context's
 * `signal` (`context.signal`, the same as the hook's `signal`) sees the abort when the turn
 * is cancelled: by SIGINT during a `bub chat` turn, and by a `bub gateway` shutdown whose
 * grace period runs out.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { installedPackage, tempHome } from "./support/installed.ts";
import { pollUntil, startBub } from "./support/live.ts";

/** Logs to $WAIT_LOG when its model starts and when the turn's signal aborts; feeds the `feeder` channel one message. */
const PLUGIN = `import { appendFileSync } from "node:fs";
import { ChannelMessage, definePlugin, type Channel, type Envelope, type MessageHandler } from "bub-ts";

const log = (line: string) => appendFileSync(process.env.WAIT_LOG!, line + "\\n");

class FeederChannel implements Channel {
  readonly name = "feeder";
  constructor(readonly handler: MessageHandler) {}
  async start() {
    // Once the gateway runs: a message handed over while channels start waits for them all.
    setTimeout(() => void this.handler(new ChannelMessage({ sessionId: "feeder:1", channel: "feeder", chatId: "1", content: "wait" })), 50);
  }
  async stop() {
    log("channel stopped");
  }
  async send(_message: Envelope) {}
}

export default definePlugin({
  name: "waiting-model",
  provideChannels: ({ messageHandler }) => [new FeederChannel(messageHandler)],
  runModel({ context, signal }) {
    if (context.signal !== signal) throw new Error("the context's signal is not the hook's");
    log("model waiting");
    return new Promise<string>((_resolve, reject) => {
      context.signal.addEventListener("abort", () => {
        log("model aborted");
        reject(context.signal.reason);
      }, { once: true });
    });
  },
});
`;

describe("a plugin's runModel waiting on its signal (installed package)", () => {
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let cwd: string;
  let waitLog: string;
  before(async () => {
    await installedPackage();
  });

  async function setUp(): Promise<void> {
    home = await tempHome();
    const plugin = join(home.path, "waiting-model.ts");
    await writeFile(plugin, PLUGIN);
    // Run from a folder that does not hold the plugin (plugins inside an untrusted workspace are not loaded).
    cwd = join(home.path, "work");
    await mkdir(cwd);
    waitLog = join(home.path, "wait.log");
    env = { BUB_HOME: join(home.path, ".bub"), BUB_PLUGINS: plugin, WAIT_LOG: waitLog };
  }

  const logLines = async () => (await readFile(waitLog, "utf8").catch(() => "")).split("\n").filter(Boolean);
  const waitFor = (line: string) => pollUntil(async () => ((await logLines()).includes(line) ? true : undefined), `"${line}" in the plugin's log`, { timeoutMs: 15_000 });

  it("SIGINT during a bub chat turn aborts the signal and bub exits 130", async () => {
    await setUp();
    const bub = await startBub(["chat"], { home: home.path, cwd, env });
    try {
      bub.child.stdin.write("wait\n");
      await waitFor("model waiting");
      bub.child.kill("SIGINT");
      const result = await bub.exited(10_000);
      assert.equal(result.code, 130, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.deepEqual(await logLines(), ["model waiting", "model aborted"]);
    } finally {
      bub.kill();
      await home.cleanup();
    }
  });

  it("bub gateway's SIGTERM aborts the signal once the grace period is over, then stops the channel", async () => {
    await setUp();
    const bub = await startBub(["gateway", "--enable-channel", "feeder"], { home: home.path, cwd, env: { ...env, BUB_SHUTDOWN_GRACE_SECONDS: "1" } });
    try {
      await waitFor("model waiting").catch((error: unknown) => {
        throw new Error(`${String(error)}\nstdout:\n${bub.stdout()}\nstderr:\n${bub.stderr()}`);
      });
      const sent = Date.now();
      bub.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(await logLines(), ["model waiting"], "the turn runs on during the grace period");
      const result = await bub.exited(10_000);
      assert.equal(result.code, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.ok(Date.now() - sent >= 900, "the turn was given its grace period");
      assert.deepEqual(await logLines(), ["model waiting", "model aborted", "channel stopped"]);
    } finally {
      bub.kill();
      await home.cleanup();
    }
  });
});
