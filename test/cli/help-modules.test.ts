// `bub --help` runs no turn, so it must not load what only a turn needs: the agent, the model
// layer, the tools and zod (about a hundred modules, a hundred-odd milliseconds of a cold
// start). The bin is run from the sources with a module hook that lists every file it loads.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "../support/temp.ts";

const BIN = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));
const LIST_LOADS = `data:text/javascript,${encodeURIComponent(
  'import { registerHooks } from "node:module"; const urls = []; registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } }); process.on("exit", () => process.stderr.write("LOADED " + JSON.stringify(urls) + "\\n"));',
)}`;

describe("bub --help", () => {
  it("loads neither the agent, the model layer, the tools nor zod", async () => {
    const dir = await tempDir();
    try {
      const run = spawnSync(process.execPath, ["--import", LIST_LOADS, BIN, "--help"], {
        cwd: dir.path,
        env: { PATH: process.env.PATH, HOME: dir.path, BUB_HOME: join(dir.path, ".bub") },
        encoding: "utf8",
      });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /Usage: bub/);
      const line = run.stderr.split("\n").find((text) => text.startsWith("LOADED "));
      assert.ok(line, run.stderr);
      const loaded: string[] = JSON.parse(line.slice("LOADED ".length));
      assert.ok(loaded.some((url) => url.endsWith("/src/cli/program.ts")), "the hook saw the CLI load");
      const unwanted = loaded.filter((url) => /\/node_modules\/zod\/|\/src\/tools\/|\/src\/(builtin\/agent-plugin|agent\/agent|llm\/model-client)\.ts$/.test(url));
      assert.deepEqual(unwanted, []);
    } finally {
      await dir.cleanup();
    }
  });
});
