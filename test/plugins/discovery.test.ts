import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createBub, type UntrustedWorkspace } from "../../src/builtin/create.ts";
import { trustFolder } from "../../src/config/trust.ts";
import { captureLogs, tempDir } from "../support/temp.ts";

/** The keys the fixture plugins (JavaScript, and TypeScript loaded as files) keep on the state. */
declare module "../../src/kernel/types.ts" {
  interface TurnState {
    audited?: boolean;
    counterWorkspace?: string;
    level?: string;
  }
}

const fixtures = fileURLToPath(new URL("../fixtures/plugins/", import.meta.url));

async function workspaceWithPackage(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const dir = await tempDir();
  await writeFile(join(dir.path, "package.json"), JSON.stringify({ name: "my-agent", dependencies: { "bub-plugin-greet": "1.0.0", "left-pad": "1.0.0" } }));
  await mkdir(join(dir.path, "node_modules"), { recursive: true });
  await cp(join(fixtures, "bub-plugin-greet"), join(dir.path, "node_modules", "bub-plugin-greet"), { recursive: true });
  await mkdir(join(dir.path, "node_modules", "left-pad"));
  await writeFile(join(dir.path, "node_modules", "left-pad", "package.json"), JSON.stringify({ name: "left-pad" }));
  return dir;
}

describe("plugin discovery and loading", () => {
  it("discovers plugins declared by the workspace's dependencies, sorted by name, after the builtin", async () => {
    const ws = await workspaceWithPackage();
    try {
      const bub = await createBub({ workspace: ws.path, home: join(ws.path, ".bub"), env: {}, trustWorkspace: true });
      assert.deepEqual(bub.pluginStatus.map((s) => [s.name, s.ok, s.source]), [
        ["builtin", true, "builtin"],
        ["audit", true, "workspace"],
        ["greet", true, "workspace"],
      ]);
      const result = await bub.processInbound({ content: "hi", session_id: "s" });
      assert.equal(result.prompt, "greet(ws): hi");
      assert.equal(result.state.audited, true);
    } finally {
      await ws.cleanup();
    }
  });

  it("discovers plugins installed in the managed plugin project (BUB_PROJECT)", async () => {
    const project = await workspaceWithPackage();
    const ws = await tempDir();
    try {
      const bub = await createBub({ workspace: ws.path, home: join(ws.path, ".bub"), env: { BUB_PROJECT: project.path } });
      assert.deepEqual(bub.pluginStatus.map((s) => `${s.name}:${s.source}`), ["builtin:builtin", "audit:project", "greet:project"]);
    } finally {
      await project.cleanup();
      await ws.cleanup();
    }
  });

  it("loads BUB_PLUGINS in order after discovered ones, so a listed .ts plugin overrides buildPrompt", async () => {
    const ws = await workspaceWithPackage();
    try {
      const bub = await createBub({ workspace: ws.path, home: join(ws.path, ".bub"), env: { BUB_PLUGINS: `${join(fixtures, "shout.ts")}` }, trustWorkspace: true });
      assert.equal(bub.pluginStatus.at(-1)?.name, "shout");
      const result = await bub.processInbound({ content: "hi", session_id: "s" });
      assert.equal(result.prompt, "HI!");
      assert.deepEqual(bub.hookReport().buildPrompt, ["shout", "greet", "builtin"]);
    } finally {
      await ws.cleanup();
    }
  });

  it("reads `plugins:` from the config file, relative to the workspace", async () => {
    const ws = await tempDir();
    try {
      await cp(join(fixtures, "class-plugin.js"), join(ws.path, "class-plugin.js"));
      await mkdir(join(ws.path, "home"));
      await writeFile(join(ws.path, "home", "config.yml"), "plugins:\n  - ./class-plugin.js\n");
      const bub = await createBub({ workspace: ws.path, home: join(ws.path, "home"), env: {}, trustWorkspace: true });
      const result = await bub.processInbound({ content: "x", session_id: "s" });
      assert.equal(result.state.counterWorkspace, ws.path);
    } finally {
      await ws.cleanup();
    }
  });

  it("loads TypeScript that Node cannot strip through the fallback loader", async () => {
    const ws = await tempDir();
    try {
      const bub = await createBub({ workspace: ws.path, home: ws.path, env: { BUB_PLUGINS: join(fixtures, "enum-plugin.ts") } });
      assert.equal(bub.pluginStatus.at(-1)?.ok, true, String(bub.pluginStatus.at(-1)?.error));
      const result = await bub.processInbound({ content: "x", session_id: "s" });
      assert.equal(result.state.level, "high");
    } finally {
      await ws.cleanup();
    }
  });

  it("records plugins that fail to import or initialise and still loads the rest", async () => {
    const ws = await tempDir();
    try {
      const listed = ["broken-import.js", "broken-init.js", "shout.ts"].map((file) => join(fixtures, file)).join(",");
      const { result: bub, logs } = await captureLogs(() => createBub({ workspace: ws.path, home: ws.path, env: { BUB_PLUGINS: listed } }));
      const status = Object.fromEntries(bub.pluginStatus.map((s) => [s.name, s]));
      assert.equal(status["broken-import"]?.ok, false);
      assert.match(String(status["broken-import"]?.error?.message), /does-not-exist/);
      assert.equal(status["broken-init"]?.ok, false);
      assert.match(String(status["broken-init"]?.error?.message), /missing token/);
      assert.equal(status.shout?.ok, true);
      assert.ok(logs.some((log) => log.message === `Failed to load plugin 'broken-import' (${join(fixtures, "broken-import.js")}); it is skipped`));
      assert.ok(logs.some((log) => log.message === `Failed to initialize plugin 'broken-init' (${join(fixtures, "broken-init.js")}); it is skipped`));
    } finally {
      await ws.cleanup();
    }
  });

  it("records a missing package named in BUB_PLUGINS", async () => {
    const ws = await tempDir();
    try {
      const { result: bub } = await captureLogs(() => createBub({ workspace: ws.path, home: ws.path, env: { BUB_PLUGINS: "no-such-bub-plugin" } }));
      const status = bub.pluginStatus.find((s) => s.name === "no-such-bub-plugin");
      assert.equal(status?.ok, false);
    } finally {
      await ws.cleanup();
    }
  });

  describe("an untrusted workspace", () => {
    it("does not load its package.json plugins or plugins: paths inside it, and says what it skipped", async () => {
      const ws = await workspaceWithPackage();
      try {
        await cp(join(fixtures, "class-plugin.js"), join(ws.path, "class-plugin.js"));
        await mkdir(join(ws.path, "home"));
        await writeFile(join(ws.path, "home", "config.yml"), `plugins:\n  - ./class-plugin.js\n  - ${join(fixtures, "shout.ts")}\n`);
        const skipped: UntrustedWorkspace[] = [];
        const bub = await createBub({ workspace: ws.path, home: join(ws.path, "home"), env: {}, onUntrustedWorkspace: (found) => skipped.push(found) });
        assert.deepEqual(bub.pluginStatus.map((s) => `${s.name}:${s.source}`), ["builtin:builtin", "shout:config"]);
        assert.deepEqual(skipped, [{ workspace: ws.path, packagePlugins: ["audit", "greet"], listedPlugins: [join(ws.path, "class-plugin.js")] }]);
        const refused = await createBub({ workspace: ws.path, home: join(ws.path, "home"), env: {}, trustWorkspace: false });
        assert.deepEqual(refused.pluginStatus.map((s) => s.name), ["builtin", "shout"]);
      } finally {
        await ws.cleanup();
      }
    });

    it("loads them once `bub trust` recorded it in <home>/trust.json", async () => {
      const ws = await workspaceWithPackage();
      try {
        const home = join(ws.path, ".bub");
        await trustFolder(home, ws.path);
        const skipped: UntrustedWorkspace[] = [];
        const bub = await createBub({ workspace: ws.path, home, env: {}, onUntrustedWorkspace: (found) => skipped.push(found) });
        assert.deepEqual(bub.pluginStatus.map((s) => s.name), ["builtin", "audit", "greet"]);
        assert.deepEqual(skipped, []);
      } finally {
        await ws.cleanup();
      }
    });

    it("reports nothing when it declares no plugins", async () => {
      const ws = await tempDir();
      try {
        await writeFile(join(ws.path, "package.json"), JSON.stringify({ name: "plain" }));
        const skipped: UntrustedWorkspace[] = [];
        await createBub({ workspace: ws.path, home: join(ws.path, ".bub"), env: {}, onUntrustedWorkspace: (found) => skipped.push(found) });
        assert.deepEqual(skipped, []);
      } finally {
        await ws.cleanup();
      }
    });
  });
});
