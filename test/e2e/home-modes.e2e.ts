/**
 * Other accounts on the machine cannot read what bub keeps: under `umask 022` (the usual
 * default, which makes new files 0644 and folders 0755), a fresh `BUB_HOME` filled by the
 * installed package — `bub run` (file and SQLite tapes, the log), `bub chat` (history), a
 * schedule, `bub trust`, and a `bub gateway` turn (the inbound journal) — holds only folders
 * 0700 and files 0600.
 */
import assert from "node:assert/strict";
import { lstat, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { within } from "./support/live.ts";

/** Every path under `root` (itself included) with its permission bits. */
async function walk(root: string): Promise<{ path: string; mode: number; directory: boolean }[]> {
  const info = await lstat(root);
  const found = [{ path: root, mode: info.mode & 0o777, directory: info.isDirectory() }];
  if (!info.isDirectory()) return found;
  for (const name of await readdir(root)) found.push(...(await walk(join(root, name))));
  return found;
}

describe("BUB_HOME is private (installed package, umask 022)", () => {
  const fx = useGatewayFixture();
  let umask = 0;
  // Children inherit the test process's umask: 022, as on most systems.
  before(() => void (umask = process.umask(0o022)));
  after(() => void process.umask(umask));

  it("creates every folder 0700 and every file 0600", async () => {
    const run = (args: string[], extra: Record<string, string> = {}, input?: string) => runBub(args, { home: fx.home, env: fx.env(extra), input });
    fx.openai.script(reply.text("Hello from the file store."), reply.text("Hello from SQLite."), reply.text("Hello from chat."), reply.text("Hello, Alice."));
    const first = await run(["run", "hello"]);
    assert.equal(first.code, 0, first.stderr);
    const sqlite = await run(["run", "hello"], { BUB_TAPE_STORE: "sqlite" });
    assert.equal(sqlite.code, 0, sqlite.stderr);
    const chat = await run(["chat"], {}, "hello\n");
    assert.equal(chat.code, 0, chat.stderr);
    const scheduled = await run(["run", `,schedule.add session=telegram:${ALICE} delay_seconds=3600 prompt="Later"`]);
    assert.equal(scheduled.code, 0, scheduled.stderr);
    const trusted = await run(["trust", fx.home]);
    assert.equal(trusted.code, 0, trusted.stderr);
    const live = await fx.start();
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hi" });
    await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the gateway's answer");
    await fx.stop(live);

    const entries = await walk(fx.bubHome);
    const names = entries.map((entry) => relative(fx.bubHome, entry.path));
    // What the commands above write, so a walk of an empty home cannot pass.
    for (const expected of ["tapes", "tapes.sqlite3", "logs", "schedules", "trust.json", "inbound"]) {
      assert.ok(names.some((name) => name === expected || name.startsWith(`${expected}/`)), `${expected} under BUB_HOME: ${names.join(", ")}`);
    }
    assert.ok(names.some((name) => /^tapes\/.+\.jsonl$/.test(name)), `a tape file: ${names.join(", ")}`);
    assert.ok(names.some((name) => /^inbound\/telegram-.+\.jsonl$/.test(name)), `the inbound journal: ${names.join(", ")}`);
    const open = entries
      .filter((entry) => entry.mode !== (entry.directory ? 0o700 : 0o600))
      .map((entry) => `${relative(fx.bubHome, entry.path) || "."} ${entry.mode.toString(8)}`);
    assert.deepEqual(open, [], "every folder 0700 and every file 0600");
  });
});
