/**
 * `npm ci` in a clone runs under whatever Node.js the machine has (often older than the
 * packages ask for) while the scripts run on the Node 24 it installs: the project's .npmrc
 * keeps npm to errors, so a user does not read dozens of EBADENGINE warnings as a failure.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("the project's npm settings", () => {
  it("npm in the clone prints errors only", async () => {
    const { stdout } = await promisify(execFile)("npm", ["config", "get", "loglevel"], { cwd: root, env: { ...process.env, npm_config_loglevel: "" } });
    assert.equal(stdout.trim(), "error");
  });
});
