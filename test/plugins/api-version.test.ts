import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import { printHookReport } from "../../src/builtin/commands/hooks.ts";
import { printPlugins } from "../../src/builtin/commands/plugins.ts";
import { listedPluginFailures } from "../../src/builtin/commands/listed-failures.ts";
import { IncompatiblePluginError, PLUGIN_API_VERSION } from "../../src/kernel/plugin-api.ts";
import { registerDiscoveredPlugins } from "../../src/plugins/register.ts";
import { checkPluginRequirement } from "../../src/plugins/api-check.ts";
import { createTestBub } from "../../src/testing.ts";
import * as entry from "../../src/index.ts";
import { captureLogs, tempDir } from "../support/temp.ts";

/** A plugin module that marks the process when imported, so a test can tell it never was. */
const marking = (name: string) => `globalThis.__imported = [...(globalThis.__imported ?? []), ${JSON.stringify(name)}];
export default { name: ${JSON.stringify(name)}, buildPrompt: ({ message }) => "${name}: " + message.content, runModel: ({ prompt }) => "answered " + prompt };
`;

/** Writes `node_modules/<pkg>` under `root` with a package.json (plus `extra`) declaring the plugin `plugin`. */
async function pluginPackage(root: string, pkg: string, plugin: string, extra: Record<string, unknown>, bub: Record<string, unknown> = {}): Promise<void> {
  const dir = join(root, "node_modules", pkg);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: pkg, version: "1.0.0", type: "module", bub: { plugins: { [plugin]: "./index.js" }, ...bub }, ...extra }));
  await writeFile(join(dir, "index.js"), marking(plugin));
}

/** A managed plugin project with: one plugin for another plugin API, one for another bub-ts, one with an unreadable range, one that fits. */
async function project(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const dir = await tempDir();
  const deps = { "bub-plugin-future": "1.0.0", "bub-plugin-oldpeer": "1.0.0", "bub-plugin-vague": "1.0.0", "bub-plugin-fits": "1.0.0" };
  await writeFile(join(dir.path, "package.json"), JSON.stringify({ name: "bub-project", private: true, dependencies: deps }));
  await pluginPackage(dir.path, "bub-plugin-future", "future", {}, { api: "^99.0.0" });
  await pluginPackage(dir.path, "bub-plugin-oldpeer", "oldpeer", { peerDependencies: { "bub-ts": ">=99.0.0" } });
  await pluginPackage(dir.path, "bub-plugin-vague", "vague", {}, { api: "soon" });
  await pluginPackage(dir.path, "bub-plugin-fits", "fits", { peerDependencies: { "bub-ts": ">=99.0.0" } }, { api: `^${PLUGIN_API_VERSION}` });
  return dir;
}

const imported = () => ((globalThis as { __imported?: string[] }).__imported ?? []);

describe("the plugin API version", () => {
  it("is exported from the package entry as a major.minor.patch version", () => {
    assert.equal(entry.PLUGIN_API_VERSION, PLUGIN_API_VERSION);
    assert.match(PLUGIN_API_VERSION, /^\d+\.\d+\.\d+$/);
    assert.equal(entry.IncompatiblePluginError, IncompatiblePluginError);
  });

  it("skips, without importing, a plugin whose range leaves out what runs; the others load and run a turn", async () => {
    const dir = await project();
    const ws = await tempDir();
    try {
      const { result: bub } = await captureLogs(() => createBub({ workspace: ws.path, home: join(ws.path, ".bub"), env: { BUB_PROJECT: dir.path } }));
      assert.deepEqual(bub.pluginStatus.map((s) => [s.name, s.ok, s.source]), [
        ["builtin", true, "builtin"],
        ["fits", true, "project"],
        ["future", false, "project"],
        ["oldpeer", false, "project"],
        ["vague", false, "project"],
      ]);
      assert.deepEqual(imported().filter((name) => name !== "fits"), [], "no skipped plugin module was imported");
      const status = (name: string) => bub.pluginStatus.find((s) => s.name === name)!;
      const future = status("future").error;
      assert.ok(future instanceof IncompatiblePluginError);
      assert.deepEqual([future.wanted, future.running, future.field], ["^99.0.0", PLUGIN_API_VERSION, "bub.api"]);
      const oldpeer = status("oldpeer").error;
      assert.ok(oldpeer instanceof IncompatiblePluginError);
      assert.deepEqual([oldpeer.wanted, oldpeer.field], [">=99.0.0", "peerDependencies.bub-ts"]);
      assert.match(oldpeer.running, /^\d+\.\d+\.\d+/);
      assert.ok(!(status("vague").error instanceof IncompatiblePluginError));
      assert.match(status("vague").error!.message, /declares bub\.api "soon" in its package\.json, which is not a version range; it was not loaded — write a range such as "\^2\./);

      const result = await bub.processInbound({ content: "hi", session_id: "s" });
      assert.equal(result.modelOutput, "answered fits: hi");

      let hooks = "";
      printHookReport(bub, { write: (text: string) => (hooks += text) });
      assert.match(hooks, /^buildPrompt: fits, builtin$/m);
      assert.match(hooks, /^runModel: fits$/m);
      assert.match(hooks, new RegExp(`Incompatible plugins \\(not loaded; each wants another version\\):\\nfuture \\(project\\): wants plugin API \\^99\\.0\\.0 \\(bub\\.api\\), running ${PLUGIN_API_VERSION.replace(/\./g, "\\.")}\\noldpeer \\(project\\): wants bub-ts >=99\\.0\\.0 \\(peerDependencies\\.bub-ts\\), running \\d`));
      assert.match(hooks, /Failed plugins:\nvague \(project\): /);
      assert.doesNotMatch(hooks.split("Failed plugins:")[1]!, /future|oldpeer/);

      let plugins = "";
      await printPlugins(bub, { write: (text: string) => (plugins += text) });
      assert.match(plugins, /^ {2}ok {5}fits \(project\)$/m);
      assert.match(plugins, new RegExp(`^  incompatible future \\(project\\): wants plugin API \\^99\\.0\\.0 \\(bub\\.api\\), running ${PLUGIN_API_VERSION.replace(/\./g, "\\.")}$`, "m"));
      assert.match(plugins, /^ {2}incompatible oldpeer \(project\): wants bub-ts >=99\.0\.0/m);
      assert.match(plugins, /^ {2}failed vague \(project\)$/m);
      assert.equal(listedPluginFailures(bub), "", "installed plugins that are skipped do not stop bub run");
    } finally {
      await dir.cleanup();
      await ws.cleanup();
    }
  });

  it("a listed incompatible plugin (a package, or a file in one) is a listed failure that names both versions", async () => {
    const dir = await project();
    const ws = await tempDir();
    try {
      await mkdir(join(ws.path, "mine", "src"), { recursive: true });
      await writeFile(join(ws.path, "mine", "package.json"), JSON.stringify({ name: "mine", bub: { api: ">=3" } }));
      await writeFile(join(ws.path, "mine", "src", "mine.js"), marking("mine"));
      const env = { BUB_PROJECT: dir.path, BUB_PLUGINS: `bub-plugin-future,${join(ws.path, "mine", "src", "mine.js")}` };
      const { result: bub } = await captureLogs(() => createBub({ workspace: ws.path, home: join(ws.path, ".bub"), env, trustWorkspace: true }));
      assert.ok(!imported().includes("mine"));
      const listed = bub.pluginStatus.filter((s) => s.source === "config");
      assert.deepEqual(listed.map((s) => [s.name, s.ok, s.error instanceof IncompatiblePluginError]), [
        ["future", false, true],
        ["mine", false, true],
      ]);
      const lines = listedPluginFailures(bub).trimEnd().split("\n");
      assert.equal(lines.length, 2);
      assert.match(lines[0]!, new RegExp(`^bub: plugin 'future' \\(bub-plugin-future\\) listed in BUB_PLUGINS or config\\.yml did not load: plugin 'future' supports plugin API \\^99\\.0\\.0 \\(bub\\.api in its package\\.json\\), but this bub-ts runs plugin API ${PLUGIN_API_VERSION.replace(/\./g, "\\.")}; it was not loaded — `));
      assert.match(lines[1]!, /^bub: plugin 'mine' .* supports plugin API >=3 \(bub\.api in its package\.json\)/);
      assert.equal((lines[1]!.match(/ — /g) ?? []).length, 1, "one 'what to do' part");
    } finally {
      await dir.cleanup();
      await ws.cleanup();
    }
  });

  it("checks a bub-ts peer range against the running bub-ts, and lets bub.api decide when both are declared", async () => {
    const dir = await project();
    try {
      const framework = await createTestBub();
      await captureLogs(() => registerDiscoveredPlugins(framework, { projectDir: dir.path, workspace: dir.path, listed: [], running: { api: "99.1.0", package: "0.5.0" } }));
      assert.deepEqual(framework.pluginStatus.filter((s) => s.source === "project").map((s) => [s.name, s.ok]), [
        ["fits", false],
        ["future", true],
        ["oldpeer", false],
        ["vague", false],
      ]);
      assert.deepEqual(await checkPluginRequirement("p", { range: "^0.1.0", field: "peerDependencies.bub-ts" }, { package: "0.1.4" }), null);
      const peer = await checkPluginRequirement("p", { range: "^0.1.0", field: "peerDependencies.bub-ts" }, { package: "0.2.0" });
      assert.ok(peer instanceof IncompatiblePluginError);
      assert.match(peer.message, /^plugin 'p' supports bub-ts \^0\.1\.0 \(peerDependencies\.bub-ts in its package\.json\), but this bub-ts runs bub-ts 0\.2\.0; it was not loaded — install a version of the plugin made for bub-ts 0\.2\.0, or a bub-ts in \^0\.1\.0$/);
      // A peer range npm wrote that is not a version range does not stop the plugin; a prerelease of bub-ts counts as its version.
      assert.equal(await checkPluginRequirement("p", { range: "workspace:*", field: "peerDependencies.bub-ts" }, { package: "0.2.0" }), null);
      assert.equal(await checkPluginRequirement("p", { range: "*", field: "peerDependencies.bub-ts" }, { package: "0.3.0-beta.1" }), null);
      assert.equal(await checkPluginRequirement("p", undefined), null);
    } finally {
      await dir.cleanup();
    }
  });
});
