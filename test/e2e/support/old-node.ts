/** Finding a Node.js older than the one bub needs, for the tests of what users see on one. */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

const execute = promisify(execFile);

/** A Node.js older than 22.19 on this machine, if there is one (the one running npm, or the system's). */
export async function oldNode(): Promise<{ path: string; version: string } | null> {
  for (const path of [process.env.npm_node_execpath, "/usr/bin/node", "/usr/local/bin/node"]) {
    if (!path || !existsSync(path)) continue;
    const { stdout } = await execute(path, ["-p", "process.versions.node"]).catch(() => ({ stdout: "" }));
    const version = stdout.trim();
    const [major = 0, minor = 0] = version.split(".").map(Number);
    if (version && (major < 22 || (major === 22 && minor < 19))) return { path, version };
  }
  return null;
}
