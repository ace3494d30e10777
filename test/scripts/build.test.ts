/**
 * `npm run build` (scripts/build.mjs) leaves an executable `bub` and never a half-built
 * dist/: a `bub` started from it during a rebuild (npx bub, npm link) finds its files.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cp, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("scripts/build.mjs", () => {
  it("rebuilds in place: the binary stays executable and present, stale files go", async () => {
    const dir = await mkdtemp(join(tmpdir(), "bub-build-"));
    const out = join(dir, "dist");
    try {
      // A previous build to rebuild over (the checkout's, as `npm ci` left it), plus a stale file.
      await cp(join(root, "dist"), out, { recursive: true });
      await writeFile(join(out, "gone.js"), "// a file whose source was deleted\n");
      const build = spawn(process.execPath, [join(root, "scripts", "build.mjs"), out], { stdio: "inherit" });
      const done = new Promise<number | null>((resolve) => build.once("exit", resolve));
      let ended = false;
      void done.then(() => (ended = true));
      let looks = 0;
      while (!ended) {
        for (const file of ["bin/bub.js", "cli/program.js", "kernel/framework.js"]) {
          const info = await stat(join(out, file)).catch(() => null);
          assert.ok(info?.isFile(), `${file} was missing during the rebuild`);
        }
        looks++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(await done, 0);
      assert.ok(looks > 0);
      const bin = await stat(join(out, "bin", "bub.js"));
      assert.equal(bin.mode & 0o111, 0o111, "dist/bin/bub.js is executable");
      await assert.rejects(stat(join(out, "gone.js")), { code: "ENOENT" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
