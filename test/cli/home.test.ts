// A BUB_HOME that cannot be created fails once, up front, with one line and exit status 1:
// no turn is started and nothing spins (Node's recursive mkdir loops for ever on /proc).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { homeProblem, makeDirectory } from "../../src/config/home-dir.ts";
import { tempDir } from "../support/temp.ts";

const BUB = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));

function bub(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    // A model server nobody listens on: the run must stop before any model call.
    const fullEnv = { PATH: process.env.PATH, HOME: cwd, BUB_MODEL: "openai:gpt-4o-mini", BUB_API_KEY: "sk-test", BUB_API_BASE: "http://127.0.0.1:9/v1", ...env };
    execFile(process.execPath, [BUB, ...args], { cwd, env: fullEnv, timeout: 20_000, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe("BUB_HOME that cannot be created", () => {
  let temp: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    temp = await tempDir("bub-home-");
  });
  after(() => temp.cleanup());

  it("stops bub run with one line when BUB_HOME is a regular file", async () => {
    const file = join(temp.path, "not-a-folder");
    writeFileSync(file, "x");
    const result = await bub(["run", "hello"], { BUB_HOME: file }, temp.path);
    assert.equal(result.stderr, `bub: cannot create ${file}: it is a file, not a folder — set BUB_HOME to a writable folder\n`);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
  });

  it("names the file in the way when BUB_HOME is below one", async () => {
    const file = join(temp.path, "blocker");
    writeFileSync(file, "x");
    const home = join(file, "deeper", "home");
    const result = await bub(["chat"], { BUB_HOME: home }, temp.path);
    assert.equal(result.stderr, `bub: cannot create ${home}: ${file} is a file, not a folder — set BUB_HOME to a writable folder\n`);
    assert.equal(result.code, 1);
  });

  it("fails once, without spinning, where mkdir answers ENOENT for ever (/proc)", { skip: process.platform !== "linux" }, async () => {
    const result = await bub(["run", "hello"], { BUB_HOME: "/proc/bub-home-test/home" }, temp.path);
    assert.equal(result.stderr, "bub: cannot create /proc/bub-home-test/home: this file system does not allow creating /proc/bub-home-test — set BUB_HOME to a writable folder\n");
    assert.equal(result.code, 1);
    assert.ok(result.ms < 15_000, `took ${result.ms} ms`);
  });

  it("fails a tape lock or SQLite store under such a path once, without spinning", { skip: process.platform !== "linux" }, async () => {
    // In a child process: a regression would block its event loop for ever, and the timeout kills it.
    const script = `
      const { createProcessLock } = await import(${JSON.stringify(new URL("../../src/tape/process-lock.ts", import.meta.url).href)});
      const { createSqliteTapeStore } = await import(${JSON.stringify(new URL("../../src/tape/sqlite-store.ts", import.meta.url).href)});
      const lock = createProcessLock("/proc/bub-home-test/tapes/.tapes.lock");
      await lock.run(() => 1).then(() => console.log("lock: ok"), (error) => console.log("lock:", error.message));
      const store = createSqliteTapeStore({ path: "/proc/bub-home-test/tapes.sqlite3" });
      await Promise.resolve().then(() => store.listTapes()).then(() => console.log("sqlite: ok"), (error) => console.log("sqlite:", error.message));
    `;
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 15_000, killSignal: "SIGKILL" }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)));
    });
    const lines = output.trim().split("\n");
    assert.equal(lines.length, 2, output);
    assert.match(lines[0]!, /^lock: .*\/proc\/bub-home-test/);
    assert.match(lines[1]!, /^sqlite: .*\/proc\/bub-home-test/);
  });

  it("creates missing levels one at a time and accepts an existing folder", () => {
    const home = join(temp.path, "a", "b", "c");
    makeDirectory(home);
    makeDirectory(home);
    assert.equal(homeProblem(home), null);
    mkdirSync(join(temp.path, "plain"));
    assert.equal(homeProblem(join(temp.path, "plain")), null);
  });
});
