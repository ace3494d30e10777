import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { installedPackage } from "./support/installed.ts";
import { oldNode } from "./support/old-node.ts";

const execute = promisify(execFile);

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
