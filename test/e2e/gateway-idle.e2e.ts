/**
 * `bub gateway` whose only channel holds nothing on the event loop (it is fed from
 * elsewhere, or only reacts to hooks): the gateway stays up until SIGTERM, then stops the
 * channel and exits 0 (it used to end at once with status 13, an unsettled top-level
 * await, without calling `stop()`).
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { installedPackage, tempHome } from "./support/installed.ts";
import { startBub } from "./support/live.ts";

const PLUGIN = `import { definePlugin, type Channel, type Envelope, type MessageHandler } from "bub-ts";

class IdleChannel implements Channel {
  readonly name = "idle";
  constructor(readonly handler: MessageHandler) {}
  async start() {
    process.stdout.write("idle: started\\n");
  }
  async stop() {
    process.stdout.write("idle: stopped\\n");
  }
  async send(_message: Envelope) {}
}

export default definePlugin({ name: "idle", provideChannels: ({ messageHandler }) => [new IdleChannel(messageHandler)] });
`;

describe("bub gateway with an idle channel (installed package)", () => {
  it("keeps running until SIGTERM, then stops the channel and exits 0", async () => {
    await installedPackage();
    const home = await tempHome();
    const plugin = join(home.path, "idle.ts");
    await writeFile(plugin, PLUGIN);
    // Run from a folder that does not hold the plugin (plugins inside an untrusted workspace are not loaded).
    const cwd = join(home.path, "work");
    await mkdir(cwd);
    const live = await startBub(["gateway", "--enable-channel", "idle"], { home: home.path, cwd, env: { BUB_HOME: join(home.path, ".bub"), BUB_PLUGINS: plugin } });
    try {
      await live.waitForStdout(/^idle: started$/m);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(live.child.exitCode, null, `the gateway is still running (stderr: ${live.stderr()})`);
      live.child.kill("SIGTERM");
      const result = await live.exited(10_000);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^idle: stopped$/m);
    } finally {
      live.kill();
      await home.cleanup();
    }
  });
});
