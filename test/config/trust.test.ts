import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { isTrusted, listTrust, revokeTrust, trustFile, trustFolder } from "../../src/config/trust.ts";
import { tempDir } from "../support/temp.ts";

async function fixture(): Promise<{ home: string; ws: string; root: string; cleanup: () => Promise<void> }> {
  const dir = await tempDir("bub-trust-");
  const home = join(dir.path, "home");
  await mkdir(join(dir.path, "ws"));
  const ws = await realpath(join(dir.path, "ws"));
  await writeFile(join(ws, "package.json"), JSON.stringify({ name: "ws", bub: { plugins: { x: "./x.js" } } }));
  await writeFile(join(ws, ".env"), "BUB_MODEL=openai:gpt-4o\n");
  return { home, ws, root: dir.path, cleanup: dir.cleanup };
}

describe("the workspace trust store", () => {
  it("records a folder in <home>/trust.json (creating home) and revokes it", async () => {
    const { home, ws, cleanup } = await fixture();
    try {
      assert.equal(await isTrusted(home, ws), false);
      const entry = await trustFolder(home, ws, new Date("2026-01-02T03:04:05Z"));
      assert.equal(entry.path, ws);
      assert.match(entry.packageJson!, /^[0-9a-f]{64}$/);
      assert.match(entry.env!, /^[0-9a-f]{64}$/);
      assert.equal(await isTrusted(home, ws), true);
      const saved = JSON.parse(await readFile(trustFile(home), "utf8")) as { trusted: { path: string; trustedAt: string }[] };
      assert.deepEqual(saved.trusted.map((item) => [item.path, item.trustedAt]), [[ws, "2026-01-02T03:04:05.000Z"]]);
      if (process.platform !== "win32") assert.equal((await stat(trustFile(home))).mode & 0o777, 0o600);
      await trustFolder(home, ws);
      assert.equal((await listTrust(home)).length, 1, "trusting again replaces the entry");
      assert.equal(await revokeTrust(home, ws), true);
      assert.equal(await isTrusted(home, ws), false);
      assert.equal(await revokeTrust(home, ws), false);
    } finally {
      await cleanup();
    }
  });

  it("is invalidated when package.json, .env or .mcp.json changes, appears or disappears", async () => {
    const { home, ws, cleanup } = await fixture();
    try {
      await trustFolder(home, ws);
      await writeFile(join(ws, "package.json"), JSON.stringify({ name: "ws", bub: { plugins: { y: "./y.js" } } }));
      assert.equal(await isTrusted(home, ws), false);
      assert.deepEqual((await listTrust(home)).map((item) => item.current), [false]);
      await trustFolder(home, ws);
      await writeFile(join(ws, ".env"), "BUB_API_BASE=http://elsewhere\n");
      assert.equal(await isTrusted(home, ws), false);
      await trustFolder(home, ws);
      await rm(join(ws, ".env"));
      assert.equal(await isTrusted(home, ws), false, "a removed .env counts as a change");
      await trustFolder(home, ws);
      assert.equal(await isTrusted(home, ws), true);
      await writeFile(join(ws, ".env"), "X=1\n");
      assert.equal(await isTrusted(home, ws), false, "a new .env counts as a change");
      await trustFolder(home, ws);
      await writeFile(join(ws, ".mcp.json"), JSON.stringify({ mcpServers: { x: { command: "x" } } }));
      assert.equal(await isTrusted(home, ws), false, "a new .mcp.json (servers bub would start) counts as a change");
      await trustFolder(home, ws);
      assert.equal(await isTrusted(home, ws), true);
    } finally {
      await cleanup();
    }
  });

  it("keys folders by their real path, through a symlink either way", async () => {
    const { home, ws, root, cleanup } = await fixture();
    try {
      const link = join(root, "link");
      await symlink(ws, link, "dir");
      const entry = await trustFolder(home, link);
      assert.equal(entry.path, ws);
      assert.equal(await isTrusted(home, ws), true);
      assert.equal(await isTrusted(home, link), true);
      assert.equal(await revokeTrust(home, ws), true);
      assert.equal(await isTrusted(home, link), false);
    } finally {
      await cleanup();
    }
  });

  it("counts an unreadable trust.json as no trust, and names it when asked to change it", async () => {
    const { home, ws, cleanup } = await fixture();
    try {
      await mkdir(home);
      await writeFile(trustFile(home), "{ not json");
      assert.equal(await isTrusted(home, ws), false);
      await assert.rejects(trustFolder(home, ws), /trust\.json is not valid JSON/);
    } finally {
      await cleanup();
    }
  });

  it("a trusted folder whose .env became a FIFO is untrusted without waiting on it, and trusting it again says why not", async () => {
    const home = await tempDir();
    const folder = await tempDir();
    try {
      await writeFile(join(folder.path, ".env"), "A=1\n");
      await trustFolder(home.path, folder.path);
      assert.equal(await isTrusted(home.path, folder.path), true);
      await rm(join(folder.path, ".env"));
      await promisify(execFile)("mkfifo", [join(folder.path, ".env")]);
      assert.equal(await isTrusted(home.path, folder.path), false);
      assert.equal((await listTrust(home.path))[0]?.current, false);
      await assert.rejects(trustFolder(home.path, folder.path), /the \.env file at \S+ is not a regular file \(a FIFO\) — replace it with a regular file or remove it/);
    } finally {
      await home.cleanup();
      await folder.cleanup();
    }
  });
});
