// The host sandbox: what the builtin tools did on this machine before sandboxes, behind the
// Sandbox interface (paths, file kinds, chunked reads, writes, shells without secrets).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { SandboxOutputStream } from "../../src/kernel/sandbox.ts";
import { createHostSandbox } from "../../src/tools/sandbox-host.ts";
import { tempDir } from "../support/temp.ts";

describe("the host sandbox", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    dir = await tempDir("bub-host-sandbox-");
  });
  after(() => dir.cleanup());

  it("resolves relative paths against the workspace, expands ~, and refuses relative paths without one", () => {
    const sandbox = createHostSandbox({ workspace: dir.path });
    assert.equal(sandbox.name, "host");
    assert.equal(sandbox.workspace, dir.path);
    assert.equal(sandbox.resolvePath(" a/../b.txt "), join(dir.path, "b.txt"));
    assert.equal(sandbox.resolvePath("/etc//hosts"), "/etc/hosts");
    assert.equal(sandbox.resolvePath("~/x"), join(homedir(), "x"));
    const nowhere = createHostSandbox({ workspace: null });
    assert.equal(nowhere.workspace, process.cwd());
    assert.throws(() => nowhere.resolvePath("a.txt"), /relative path 'a.txt' is not allowed without a workspace/);
  });

  it("says what a path is, following links, and null for nothing or a dangling link", async () => {
    const sandbox = createHostSandbox({ workspace: dir.path });
    writeFileSync(join(dir.path, "file.txt"), "12345");
    symlinkSync(join(dir.path, "file.txt"), join(dir.path, "link.txt"));
    symlinkSync(join(dir.path, "gone.txt"), join(dir.path, "dangling.txt"));
    execFileSync("mkfifo", [join(dir.path, "pipe")]);
    assert.deepEqual(await sandbox.stat(join(dir.path, "file.txt")), { kind: "file", size: 5, symbolicLink: false });
    assert.deepEqual(await sandbox.stat(join(dir.path, "link.txt")), { kind: "file", size: 5, symbolicLink: true });
    assert.deepEqual(await sandbox.stat(dir.path), { kind: "directory", size: (await sandbox.stat(dir.path))!.size, symbolicLink: false });
    assert.equal((await sandbox.stat(join(dir.path, "pipe")))!.kind, "fifo");
    assert.equal(await sandbox.stat(join(dir.path, "dangling.txt")), null);
    assert.equal(await sandbox.stat(join(dir.path, "file.txt", "below")), null);
    assert.equal(await sandbox.realPath(join(dir.path, "link.txt")), join(dir.path, "file.txt"));
  });

  it("reads a file in chunks, stops where the reader stops, and refuses a directory with EISDIR", async () => {
    const sandbox = createHostSandbox({ workspace: dir.path });
    const big = "x".repeat(200 * 1024);
    writeFileSync(join(dir.path, "big.txt"), big);
    const chunks: Uint8Array[] = [];
    for await (const chunk of sandbox.readFile(join(dir.path, "big.txt"))) chunks.push(chunk);
    assert.ok(chunks.length > 1);
    assert.equal(Buffer.concat(chunks).toString(), big);
    let first = 0;
    for await (const chunk of sandbox.readFile(join(dir.path, "big.txt"))) {
      first = chunk.length;
      break;
    }
    assert.ok(first > 0 && first < big.length);
    await assert.rejects(async () => {
      for await (const _ of sandbox.readFile(dir.path)) void _;
    }, { code: "EISDIR" });
  });

  it("writes UTF-8 text, creating the parent folders", async () => {
    const sandbox = createHostSandbox({ workspace: dir.path });
    await sandbox.writeFile(join(dir.path, "deep", "er", "note.txt"), "héllo");
    assert.equal(readFileSync(join(dir.path, "deep", "er", "note.txt"), "utf8"), "héllo");
    mkdirSync(join(dir.path, "blocked"));
    writeFileSync(join(dir.path, "blocked", "file"), "");
    await assert.rejects(sandbox.writeFile(join(dir.path, "blocked", "file", "x.txt"), "x"), /cannot create the folder .*blocked\/file: it is a file, not a folder/);
  });

  it("writes to where links lead, dangling ones too, and follows them in realPath", async () => {
    const sandbox = createHostSandbox({ workspace: dir.path });
    mkdirSync(join(dir.path, "elsewhere"));
    symlinkSync(join(dir.path, "elsewhere", "later", "t.txt"), join(dir.path, "to-later"));
    assert.equal(await sandbox.realPath(join(dir.path, "to-later")), join(dir.path, "elsewhere", "later", "t.txt"));
    await sandbox.writeFile(join(dir.path, "to-later"), "through");
    assert.equal(readFileSync(join(dir.path, "elsewhere", "later", "t.txt"), "utf8"), "through");
    symlinkSync("loop-b", join(dir.path, "loop-a"));
    symlinkSync("loop-a", join(dir.path, "loop-b"));
    await assert.rejects(sandbox.realPath(join(dir.path, "loop-a")), /too many levels of symbolic links/);
    await assert.rejects(sandbox.writeFile(join(dir.path, "loop-a"), "x"), /too many levels of symbolic links/);
  });

  it("runs commands without the process's secrets unless passed through, tags the streams, and kills the group", async () => {
    const run = (passthrough: string | undefined, command: string) => {
      const sandbox = createHostSandbox({ workspace: dir.path, envPassthrough: () => passthrough });
      const output: [SandboxOutputStream, string][] = [];
      const running = sandbox.exec({ command, cwd: dir.path }, (chunk, stream) => output.push([stream, Buffer.from(chunk).toString()]));
      return { running, output };
    };
    process.env.BUB_SANDBOX_TEST_API_KEY = "sk-sandbox-secret";
    try {
      const hidden = run(undefined, "echo ${BUB_SANDBOX_TEST_API_KEY:-none}; echo oops >&2; exit 4");
      assert.equal(await hidden.running.exited, 4);
      await hidden.running.closed;
      assert.deepEqual(hidden.output.sort(), [["stderr", "oops\n"], ["stdout", "none\n"]]);
      const kept = run("BUB_SANDBOX_TEST_API_KEY", "echo $BUB_SANDBOX_TEST_API_KEY; pwd");
      await kept.running.closed;
      assert.equal(kept.output.map(([, text]) => text).join(""), `sk-sandbox-secret\n${dir.path}\n`);
    } finally {
      delete process.env.BUB_SANDBOX_TEST_API_KEY;
    }
    const sleeper = run(undefined, "sleep 30 & sleep 30");
    await new Promise((resolve) => setTimeout(resolve, 50));
    sleeper.running.kill("SIGTERM");
    assert.equal(await sleeper.running.exited, -15);
    await sleeper.running.closed; // the background sleep got the signal too, so the pipes close
  });
});
