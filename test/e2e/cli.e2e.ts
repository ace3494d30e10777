import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

describe("the installed bub binary", () => {
  let home: Awaited<ReturnType<typeof tempHome>>;
  before(async () => {
    await installedPackage();
    home = await tempHome();
  });
  after(() => home.cleanup());

  it("prints the package's version for --version", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    const result = await runBub(["--version"], { home: home.path });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), pkg.version);
  });

  it("lists its commands for --help with no config.yml", async () => {
    const result = await runBub(["--help"], { home: home.path, env: { BUB_HOME: join(home.path, "fresh") } });
    assert.equal(result.code, 0, result.stderr);
    for (const command of ["run", "chat", "gateway", "plugins", "onboard", "install", "uninstall"]) assert.match(result.stdout, new RegExp(`\\n  ${command}\\b`));
    assert.equal(result.stderr, "");
  });

  it("starts with a config.yml: --help and hooks", async () => {
    const bubHome = join(home.path, "configured");
    await mkdir(bubHome, { recursive: true });
    await writeFile(join(bubHome, "config.yml"), "model: openai:gpt-4o-mini\nmax_steps: 20\n");
    const help = await runBub(["--help"], { home: home.path, env: { BUB_HOME: bubHome } });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /Usage: bub/);
    const hooks = await runBub(["hooks"], { home: home.path, env: { BUB_HOME: bubHome } });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.match(hooks.stdout, /buildPrompt: builtin/);
    assert.match(hooks.stdout, /runModel\w*: builtin/);
  });

  it("refuses a malformed config.yml with one line naming the file and line, exit 1", async () => {
    const bubHome = join(home.path, "broken");
    await mkdir(bubHome, { recursive: true });
    const file = join(bubHome, "config.yml");
    await writeFile(file, "model: openai:gpt-4o-mini\napi_key: [unclosed\nmax_steps: 3\n");
    for (const args of [["hooks"], ["--help"], ["run", "hello"]]) {
      const result = await runBub(args, { home: home.path, env: { BUB_HOME: bubHome } });
      assert.equal(result.code, 1, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
      const lines = result.stderr.trim().split("\n");
      assert.equal(lines.length, 1, result.stderr);
      assert.ok(lines[0]!.startsWith("bub: "), lines[0]);
      assert.ok(lines[0]!.includes(file), lines[0]);
      assert.match(lines[0]!, /line \d+/);
      assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    }
  });
});
