// AGENTS.md for the synchronous systemPrompt hook: read off the event loop by loadState, at most once per maxAgeMs.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { captureLogs } from "../support/temp.ts";
import { AgentsFiles, builtinSystemPrompt, DEFAULT_SYSTEM_PROMPT } from "../../src/builtin/system-prompt.ts";

async function workspace(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "bub-agents-"));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

describe("AgentsFiles", () => {
  it("serves what refresh read, and reads again only once the text is older than maxAgeMs", async () => {
    const ws = await workspace();
    try {
      await writeFile(join(ws.path, "AGENTS.md"), "  first rules \n");
      const files = new AgentsFiles({ maxAgeMs: 50 });
      await files.refresh(ws.path);
      assert.equal(builtinSystemPrompt(ws.path, files), `${DEFAULT_SYSTEM_PROMPT}\n\nfirst rules`);
      await writeFile(join(ws.path, "AGENTS.md"), "second rules");
      await files.refresh(ws.path);
      assert.equal(files.text(ws.path), "first rules", "within maxAgeMs the text held is kept");
      await new Promise((resolve) => setTimeout(resolve, 60));
      await files.refresh(ws.path);
      assert.equal(files.text(ws.path), "second rules");
    } finally {
      await ws.cleanup();
    }
  });

  it("shares one read between concurrent refreshes, reads a never-refreshed workspace at once, and treats a missing file as empty", async () => {
    const ws = await workspace();
    try {
      const files = new AgentsFiles();
      assert.equal(builtinSystemPrompt(ws.path, files), DEFAULT_SYSTEM_PROMPT, "no AGENTS.md");
      const other = await workspace();
      try {
        await writeFile(join(other.path, "AGENTS.md"), "other rules");
        const [a, b] = [files.refresh(other.path), files.refresh(other.path)];
        assert.equal(a, b, "one read in flight");
        await a;
        assert.equal(files.text(other.path), "other rules");
      } finally {
        await other.cleanup();
      }
    } finally {
      await ws.cleanup();
    }
  });

  it("leaves out an AGENTS.md that is a FIFO, a link to /dev/zero or over maxBytes, warning once per problem rather than per read", async () => {
    const ws = await workspace();
    try {
      const file = join(ws.path, "AGENTS.md");
      await promisify(execFile)("mkfifo", [file]);
      const files = new AgentsFiles({ maxAgeMs: 0, maxBytes: () => 10 });
      const first = await captureLogs(async () => {
        await files.refresh(ws.path);
        await files.refresh(ws.path);
      });
      assert.equal(files.text(ws.path), "");
      assert.deepEqual(first.logs.map((record) => record.message), [`agents_md.skipped AGENTS.md at ${file} is not a regular file (a FIFO) — replace it with a regular file or remove it`]);
      await unlink(file);
      await symlink("/dev/zero", file);
      const second = await captureLogs(() => files.refresh(ws.path));
      assert.match(second.logs[0]!.message, /is not a regular file \(a character device\)/);
      await unlink(file);
      await writeFile(file, "eleven char");
      const third = await captureLogs(() => files.refresh(ws.path));
      assert.equal(files.text(ws.path), "");
      assert.match(third.logs[0]!.message, /AGENTS\.md at \S+ is 11 B, over the 10 B bound for AGENTS\.md — shorten it or raise BUB_AGENTS_MAX_BYTES/);
      await writeFile(file, "ten chars!");
      await files.refresh(ws.path);
      assert.equal(files.text(ws.path), "ten chars!");
      const never = new AgentsFiles({ maxBytes: () => 5 });
      assert.equal((await captureLogs(async () => never.text(ws.path))).result, "", "the synchronous first read is bounded too");
    } finally {
      await ws.cleanup();
    }
  });
});
