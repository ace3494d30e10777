/**
 * The plugin API version on the installed package: a packed plugin that declares a plugin
 * API range the running bub is outside of is installed (`bub install` says it will not
 * load), listed as incompatible by `bub hooks`
 * and `bub plugins` with both versions, and never imported; another installed plugin still
 * answers a `bub run` turn. Listed in BUB_PLUGINS, the incompatible one stops `bub run`.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { access, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const execute = promisify(execFile);

/** Writes and packs a plugin package `bub-plugin-<name>` whose module is `source`; returns the tarball. */
async function packPlugin(root: string, name: string, api: string, source: string): Promise<string> {
  const dir = join(root, `bub-plugin-${name}`);
  await mkdir(dir, { recursive: true });
  const pkg = { name: `bub-plugin-${name}`, version: "1.0.0", type: "module", files: ["index.js"], peerDependencies: { "bub-ts": "*" }, bub: { plugins: { [name]: "./index.js" }, api } };
  await writeFile(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  await writeFile(join(dir, "index.js"), source);
  const { stdout } = await execute("npm", ["pack", "--silent", "--pack-destination", root], { cwd: dir });
  return join(root, stdout.trim().split("\n").at(-1)!);
}

describe("a plugin package for another plugin API, installed next to one that fits", () => {
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let marker: string;
  let running: string;
  before(async () => {
    const { prefix } = await installedPackage();
    running = ((await import(join(prefix, "node_modules", "bub-ts", "dist", "index.js"))) as { PLUGIN_API_VERSION: string }).PLUGIN_API_VERSION;
    home = await tempHome();
    marker = join(home.path, "future-was-imported");
    const future = await packPlugin(
      home.path,
      "future",
      "^99.0.0",
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "imported");\nexport default { name: "future", runModel: () => "from the future" };\n`,
    );
    const echo = await packPlugin(home.path, "echo", `>=${running.split(".")[0]}.0.0`, `export default { name: "echo", runModel: ({ prompt }) => "echo: " + String(prompt).split("\\n").at(-1) };\n`);
    env = { BUB_HOME: join(home.path, "bub"), npm_config_registry: "http://127.0.0.1:9/", npm_config_update_notifier: "false" };
    const install = await runBub(["install", future, echo], { home: home.path, env, timeoutMs: 120_000 });
    assert.equal(install.code, 0, install.stdout + install.stderr);
    assert.match(install.stdout, /^Plugins: echo \(bub-plugin-echo\), future \(bub-plugin-future\)$/m);
    assert.ok(install.stdout.includes(`\nIncompatible: future (bub-plugin-future) wants plugin API ^99.0.0 (bub.api), running ${running}; it will not load.\n`), install.stdout);
    assert.doesNotMatch(install.stdout, /Incompatible: echo/);
  });
  after(() => home.cleanup());

  it("`bub hooks` and `bub plugins` list it as incompatible with the range it asked for and the version running", async () => {
    const wants = `wants plugin API ^99.0.0 (bub.api), running ${running}`;
    const hooks = await runBub(["hooks"], { home: home.path, env });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.match(hooks.stdout, /^runModel: echo$/m);
    assert.ok(hooks.stdout.includes(`Incompatible plugins (not loaded; each wants another version):\nfuture (project): ${wants}\n`), hooks.stdout);
    assert.doesNotMatch(hooks.stdout, /Failed plugins/);

    const plugins = await runBub(["plugins"], { home: home.path, env });
    assert.equal(plugins.code, 0, plugins.stderr);
    assert.match(plugins.stdout, /^ {2}ok {5}echo \(project\)$/m);
    assert.ok(plugins.stdout.includes(`\n  incompatible future (project): ${wants}\n`), plugins.stdout);
    await assert.rejects(access(marker), "the incompatible plugin's module was never imported");
  });

  it("skips it and runs a turn with the other plugin; listed in BUB_PLUGINS, it stops `bub run` with exit 1", async () => {
    const run = await runBub(["run", "hello there"], { home: home.path, env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^echo: hello there$/m);
    assert.doesNotMatch(run.stdout, /from the future/);

    const listed = await runBub(["run", "hello there"], { home: home.path, env: { ...env, BUB_PLUGINS: "bub-plugin-future" } });
    assert.equal(listed.code, 1, listed.stdout + listed.stderr);
    assert.ok(
      listed.stderr.includes(`bub: plugin 'future' (bub-plugin-future) listed in BUB_PLUGINS or config.yml did not load: plugin 'future' supports plugin API ^99.0.0 (bub.api in its package.json), but this bub-ts runs plugin API ${running}; it was not loaded — `),
      listed.stderr,
    );
    assert.doesNotMatch(listed.stdout, /echo: hello there/);
    await assert.rejects(access(marker), "the incompatible plugin's module was never imported");
  });
});
