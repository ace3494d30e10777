import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { installedPackage } from "./support/installed.ts";

const execute = promisify(execFile);

/** A Node.js older than 22.19 on this machine, if there is one (the one running npm, or the system's). */
async function oldNode(): Promise<{ path: string; version: string } | null> {
  for (const path of [process.env.npm_node_execpath, "/usr/bin/node", "/usr/local/bin/node"]) {
    if (!path || !existsSync(path)) continue;
    const { stdout } = await execute(path, ["-p", "process.versions.node"]).catch(() => ({ stdout: "" }));
    const version = stdout.trim();
    const [major = 0, minor = 0] = version.split(".").map(Number);
    if (version && (major < 22 || (major === 22 && minor < 19))) return { path, version };
  }
  return null;
}

describe("the installed bin under an old Node.js", () => {
  it("prints one line naming the needed and the running version, and exits 1", async (t) => {
    const node = await oldNode();
    if (!node) return t.skip("no Node.js older than 22.19 on this machine");
    const { bin } = await installedPackage();
    for (const args of [["--help"], ["run", "hello"]]) {
      const result: { code: number; stdout: string; stderr: string } = await execute(node.path, [bin, ...args]).then(
        (done) => ({ code: 0, stdout: done.stdout, stderr: done.stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      assert.equal(result.code, 1);
      assert.equal(result.stdout, "");
      assert.equal(result.stderr, `bub needs Node.js >= 22.19; this is ${node.version}\n`);
    }
  });
});
