import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { gatewayBusyLine, gatewayLockPaths, tryGatewayLock } from "../../src/channels/gateway-lock.ts";
import { tempDir } from "../support/temp.ts";

const MODULE = new URL("../../src/channels/gateway-lock.ts", import.meta.url).href;

describe("the gateway lock", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let home: string;
  beforeEach(async () => {
    dir = await tempDir();
    home = join(dir.path, ".bub");
  });
  afterEach(() => dir.cleanup());

  it("is held by one taker at a time, names its holder, and is free again once released", async () => {
    const first = tryGatewayLock(home);
    assert.ok("held" in first);
    assert.equal((await readFile(gatewayLockPaths(home).pid, "utf8")).trim(), String(process.pid));
    assert.equal((await stat(gatewayLockPaths(home).lock)).mode & 0o777, 0o600);
    assert.deepEqual(tryGatewayLock(home), { busy: { pid: process.pid } });
    assert.ok("held" in first, "a refused try leaves the lock held");
    assert.deepEqual(tryGatewayLock(home), { busy: { pid: process.pid } });
    await first.held.release();
    await assert.rejects(readFile(gatewayLockPaths(home).pid), { code: "ENOENT" });
    const second = tryGatewayLock(home);
    assert.ok("held" in second);
    await second.held.release();
  });

  it("is free once the process holding it is killed with SIGKILL", async () => {
    // The holder keeps its lock reachable (a gateway does): a collected lock closes its database.
    const holder = spawn(process.execPath, ["--input-type=module", "-e", `const { tryGatewayLock } = await import(${JSON.stringify(MODULE)}); const got = tryGatewayLock(${JSON.stringify(home)}); globalThis.lock = got; console.log("held" in got ? "held" : "busy"); setInterval(() => {}, 1000);`], { stdio: ["ignore", "pipe", "inherit"] });
    const closed = once(holder, "close");
    try {
      const [line] = (await once(holder.stdout.setEncoding("utf8"), "data")) as [string];
      assert.equal(line.trim(), "held");
      assert.deepEqual(tryGatewayLock(home), { busy: { pid: holder.pid } });
    } finally {
      // Killed whatever happened above: a holder left running would keep this test file alive.
      holder.kill("SIGKILL");
      await closed;
    }
    const after = tryGatewayLock(home);
    assert.ok("held" in after, "no stale lock after kill -9");
    assert.equal((await readFile(gatewayLockPaths(home).pid, "utf8")).trim(), String(process.pid));
    await after.held.release();
  });

  it("says who holds it when the pid file is readable, and not otherwise", async () => {
    const held = tryGatewayLock(home);
    assert.ok("held" in held);
    await writeFile(gatewayLockPaths(home).pid, "garbage");
    assert.deepEqual(tryGatewayLock(home), { busy: { pid: null } });
    await held.held.release();
    assert.equal(gatewayBusyLine("/h", 42), "bub: another bub gateway is running on /h (pid 42) — stop it first, or set BUB_DATABASE_URL to run several");
    assert.equal(gatewayBusyLine("/h", null), "bub: another bub gateway is running on /h — stop it first, or set BUB_DATABASE_URL to run several");
  });

  it("refuses a lock file that is not a SQLite file with one line", async () => {
    await mkdir(home, { recursive: true });
    await writeFile(gatewayLockPaths(home).lock, "this is not a database, but long enough to look like a header of something");
    assert.throws(() => tryGatewayLock(home), (error: Error) => /Cannot use the gateway lock file .*gateway\.lock/.test(error.message));
  });
});
