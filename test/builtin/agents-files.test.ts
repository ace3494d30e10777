// AGENTS.md for the synchronous systemPrompt hook: read off the event loop by loadState, at most once per maxAgeMs.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
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
});
