/**
 * A command that floods its output: the installed `bub run` keeps only the first and the
 * last half of `bash_output_max_bytes` (1 MiB by default) of it, the model sees the cut
 * notice, and bub's memory stays small however much the command writes.
 */
import assert from "node:assert/strict";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, tempHome } from "./support/installed.ts";
import { onlyTape, startBub, type LiveBub } from "./support/live.ts";

/** 300 MB of output, written as fast as the pipe takes it. */
const FLOOD = "yes 0123456789abcdef | head -c 300000000";
const MIB = 1024 * 1024;

/** The peak resident size of `pid` in bytes (VmHWM), or null once it is gone. */
async function peakResident(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => null);
  const match = status ? /^VmHWM:\s+(\d+) kB$/m.exec(status) : null;
  return match ? Number(match[1]) * 1024 : null;
}

describe("a command that floods its output", () => {
  let model: FakeOpenAI;
  before(async () => {
    await installedPackage();
    model = await startFakeOpenAI();
  });
  after(() => model.close());

  it("bub run keeps the head and the tail with a cut notice, and its peak memory stays small", async () => {
    const home = await tempHome();
    let live: LiveBub | undefined;
    try {
      model.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: FLOOD }) }]), reply.text("Flood seen."));
      // Spilling off: the whole bounded result goes into the next model request.
      const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-test", BUB_SPILL_THRESHOLD: "0" };
      live = await startBub(["run", "flood"], { home: home.path, env });
      live.child.stdin.end();
      const pid = live.child.pid;
      assert.ok(pid !== undefined);
      // VmHWM only grows: the last reading before the process goes is its peak.
      let peak = 0;
      let running = true;
      const sampler = (async () => {
        while (running) {
          const value = await peakResident(pid);
          if (value === null) break;
          peak = Math.max(peak, value);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const result = await live.exited(120_000).finally(() => (running = false));
      await sampler;
      assert.equal(result.code, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.match(result.stdout, /Flood seen\./);
      assert.ok(peak > 0, "the peak resident size was read");
      assert.ok(peak < 400 * MIB, `bub reached ${(peak / MIB).toFixed(0)} MiB resident`);

      const toolMessages = model.requests.at(-1)!.body.messages.filter((message) => message.role === "tool");
      assert.equal(toolMessages.length, 1);
      const content = String(toolMessages[0]!.content);
      assert.ok(Buffer.byteLength(content) <= MIB + 1024, `the tool result is ${Buffer.byteLength(content)} bytes`);
      const notice = /\n\[\.\.\. ([\d,]+) bytes \(([\d,]+) line breaks\) of output cut here: only the first 524,288 bytes and the last 524,288 bytes are kept \(bash_output_max_bytes\) \.\.\.\]\n/.exec(content);
      assert.ok(notice, `no cut notice in the tool result:\n${content.slice(0, 200)}`);
      assert.equal(Number(notice[1]!.replaceAll(",", "")), 300_000_000 - MIB);
      assert.ok(content.startsWith("0123456789abcdef\n0123456789abcdef\n"));

      // The tape holds the bounded result, not the flood.
      const entries = await onlyTape(join(home.path, ".bub"));
      assert.deepEqual(entries.map((entry) => entry.id), entries.map((_entry, index) => index + 1), "ids count from 1 without gaps");
      const tapes = join(home.path, ".bub", "tapes");
      for (const name of await readdir(tapes)) {
        const { size } = await stat(join(tapes, name));
        assert.ok(size < 8 * MIB, `${name} is ${size} bytes`);
      }
    } finally {
      live?.kill();
      await home.cleanup();
    }
  });
});
