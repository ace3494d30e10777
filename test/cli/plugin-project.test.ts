import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { chmod, cp, readFile, readlink, writeFile, mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createBub } from "../../src/builtin/create.ts";
import { ensureProject, linkRuntime, runningPackage, toNpmSpec, type NpmRunner, type ProjectContext } from "../../src/builtin/commands/plugin-project.ts";
import { installPlugins } from "../../src/builtin/commands/install.ts";
import { updatePlugins } from "../../src/builtin/commands/update.ts";
import { packagesToRemove, uninstallPlugins } from "../../src/builtin/commands/uninstall.ts";
import { printPlugins } from "../../src/builtin/commands/plugins.ts";
import { tempDir } from "../support/temp.ts";

const run = promisify(execFile);
const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));
const greetFixture = fileURLToPath(new URL("../fixtures/plugins/bub-plugin-greet", import.meta.url));
const helloFixture = fileURLToPath(new URL("../fixtures/plugins/bub-plugin-hello", import.meta.url));
const hasNpm = spawnSync("npm", ["--version"], { encoding: "utf8" }).status === 0;

function capture() {
  let stdout = "";
  let stderr = "";
  return { io: { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } }, out: () => stdout, err: () => stderr };
}

function recordingNpm(code = 0): NpmRunner & { calls: { args: readonly string[]; cwd: string }[] } {
  const calls: { args: readonly string[]; cwd: string }[] = [];
  const runner = async (args: readonly string[], options: { cwd: string }) => {
    calls.push({ args, cwd: options.cwd });
    return code;
  };
  return Object.assign(runner, { calls });
}

describe("plugin specs", () => {
  it("maps paths, git URLs and owner/repo to what npm installs, and leaves npm names alone", () => {
    const cwd = "/work/here";
    assert.equal(toNpmSpec("./my-plugin", cwd), "file:/work/here/my-plugin");
    assert.equal(toNpmSpec("../other", cwd), "file:/work/other");
    assert.equal(toNpmSpec("/abs/plugin", cwd), "file:/abs/plugin");
    assert.equal(toNpmSpec("~/plugin", cwd), `file:${join(homedir(), "plugin")}`);
    assert.equal(toNpmSpec("git@github.com:me/plugin.git", cwd), "git+ssh://git@github.com:me/plugin.git");
    assert.equal(toNpmSpec("https://github.com/me/plugin", cwd), "git+https://github.com/me/plugin");
    assert.equal(toNpmSpec("https://example.com/me/plugin.git#v2", cwd), "git+https://example.com/me/plugin.git#v2");
    assert.equal(toNpmSpec("https://example.com/plugin-1.0.0.tgz", cwd), "https://example.com/plugin-1.0.0.tgz");
    assert.equal(toNpmSpec("me/plugin", cwd), "github:me/plugin");
    assert.equal(toNpmSpec("me/plugin#v1.2", cwd), "github:me/plugin#v1.2");
    assert.equal(toNpmSpec("me/plugin@main", cwd), "github:me/plugin#main");
    assert.equal(toNpmSpec("bub-plugin-greet", cwd), "bub-plugin-greet");
    assert.equal(toNpmSpec("bub-plugin-greet@1.2.0", cwd), "bub-plugin-greet@1.2.0");
    assert.equal(toNpmSpec("@scope/plugin@^2", cwd), "@scope/plugin@^2");
    assert.equal(toNpmSpec("git+https://host/x.git", cwd), "git+https://host/x.git");
    assert.throws(() => toNpmSpec("  ", cwd), /empty plugin spec/);
  });
});

describe("install, update and uninstall with a recording npm", () => {
  it("creates the project on first use and runs the matching npm command in it", async () => {
    const dir = await tempDir();
    try {
      const project = join(dir.path, "project");
      const npm = recordingNpm();
      const { io, out } = capture();
      const context: ProjectContext = { defaultProject: project, cwd: dir.path, npm, io };
      assert.equal(await installPlugins(context, ["./local", "me/repo#v1", "name@2"]), 0);
      const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8")) as { name: string; private: boolean };
      assert.equal(manifest.name, "bub-project");
      assert.equal(manifest.private, true);
      assert.match(out(), /Created the plugin project at .*project\n/);
      assert.deepEqual(npm.calls[0], { cwd: project, args: ["install", "--save", "--no-audit", "--no-fund", `file:${join(dir.path, "local")}`, "github:me/repo#v1", "name@2"] });
      assert.equal(await installPlugins(context, []), 0);
      assert.deepEqual(npm.calls[1]!.args, ["install", "--no-audit", "--no-fund"]);
      assert.equal(await updatePlugins(context, []), 0);
      assert.deepEqual(npm.calls[2]!.args, ["update", "--save", "--no-audit", "--no-fund"]);
      assert.equal(await updatePlugins(context, ["a", "b"]), 0);
      assert.deepEqual(npm.calls[3]!.args, ["update", "--save", "--no-audit", "--no-fund", "a", "b"]);
      assert.equal(await installPlugins(context, ["a"], { project: "elsewhere" }), 0);
      const elsewhere = join(dir.path, "elsewhere");
      const listed = JSON.parse(await readFile(join(elsewhere, "package.json"), "utf8")) as { dependencies: Record<string, string> };
      await writeFile(join(elsewhere, "package.json"), JSON.stringify({ ...listed, dependencies: { ...listed.dependencies, a: "^1.0.0" } }));
      assert.equal(await uninstallPlugins(context, ["a"], { project: "elsewhere" }), 0);
      assert.deepEqual(npm.calls[5], { cwd: elsewhere, args: ["uninstall", "--save", "--no-audit", "--no-fund", "a"] });
      assert.equal((out().match(/Created the plugin project/g) ?? []).length, 2, "created once per project");
    } finally {
      await dir.cleanup();
    }
  });

  it("reports a failing npm with the command and its exit code, which becomes bub's", async () => {
    const dir = await tempDir();
    try {
      const fakeNpm = join(dir.path, "fake-npm.sh");
      await writeFile(fakeNpm, `#!/bin/sh\necho "$@" > "${join(dir.path, "args.txt")}"\nexit 3\n`);
      await chmod(fakeNpm, 0o755);
      const env = { PATH: process.env.PATH, HOME: dir.path, BUB_HOME: join(dir.path, "home"), BUB_NPM: fakeNpm };
      const result = await run(process.execPath, [bin, "install", "bub-plugin-greet"], { cwd: dir.path, env }).catch((error) => error as { code: number; stderr: string });
      assert.equal((result as { code: number }).code, 3);
      assert.match((result as { stderr: string }).stderr, /^bub: `npm install --save --no-audit --no-fund bub-plugin-greet` failed with exit code 3 in .*bub-project — check npm's message above/m);
      assert.equal((await readFile(join(dir.path, "args.txt"), "utf8")).trim(), "install --save --no-audit --no-fund bub-plugin-greet");
    } finally {
      await dir.cleanup();
    }
  });
});

describe("the project's bub-ts dependency", () => {
  it("is a package in the project standing for the running bub-ts, listed as file:.bub-ts", async () => {
    const dir = await tempDir();
    try {
      await ensureProject(dir.path);
      const runtime = runningPackage();
      assert.deepEqual(JSON.parse(await readFile(join(runtime.root, "package.json"), "utf8")).name, "bub-ts");
      await linkRuntime(dir.path, runtime);
      const manifest = JSON.parse(await readFile(join(dir.path, "package.json"), "utf8")) as { dependencies: Record<string, string> };
      assert.deepEqual(manifest.dependencies, { "bub-ts": "file:.bub-ts" });
      const stub = JSON.parse(await readFile(join(dir.path, ".bub-ts", "package.json"), "utf8")) as { name: string; version: string; scripts?: unknown };
      assert.equal(stub.name, "bub-ts");
      assert.equal(stub.version, runtime.version);
      assert.equal(stub.scripts, undefined, "nothing for npm to run");
      assert.match(await readFile(join(dir.path, ".bub-ts", "index.js"), "utf8"), new RegExp(`^export \\* from ${JSON.stringify(runtime.entry).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")};$`, "m"));
      const lib = (await import(join(dir.path, ".bub-ts", "index.js"))) as Record<string, unknown>;
      const self = (await import("../../src/index.ts")) as Record<string, unknown>;
      assert.equal(lib.BubFramework, self.BubFramework, "the same classes as the running copy");

      await linkRuntime(dir.path, { root: "/elsewhere/bub-ts", version: "9.9.9", entry: "file:///elsewhere/bub-ts/dist/index.js" });
      assert.equal(JSON.parse(await readFile(join(dir.path, ".bub-ts", "package.json"), "utf8")).version, "9.9.9", "follows the running copy");
      assert.match(await readFile(join(dir.path, ".bub-ts", "index.js"), "utf8"), /export \* from "file:\/\/\/elsewhere\/bub-ts\/dist\/index\.js";/);
    } finally {
      await dir.cleanup();
    }
  });

  it("leaves a project that lists bub-ts otherwise alone", async () => {
    const dir = await tempDir();
    try {
      const manifest = { name: "mine", dependencies: { "bub-ts": "file:../bub-ts-checkout" } };
      await writeFile(join(dir.path, "package.json"), JSON.stringify(manifest));
      await linkRuntime(dir.path, runningPackage());
      assert.deepEqual(JSON.parse(await readFile(join(dir.path, "package.json"), "utf8")), manifest);
      await assert.rejects(readFile(join(dir.path, ".bub-ts", "package.json")), { code: "ENOENT" });
    } finally {
      await dir.cleanup();
    }
  });
});

describe("uninstall names", () => {
  it("maps a plugin name to the package that declares it, and refuses unknown names", async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, "package.json"), JSON.stringify({ dependencies: { "bub-plugin-greet": "1.0.0", "bub-ts": "file:.bub-ts", other: "1.0.0" } }));
      await cp(greetFixture, join(dir.path, "node_modules", "bub-plugin-greet"), { recursive: true });
      assert.deepEqual(await packagesToRemove(dir.path, ["other"]), { packages: ["other"], notes: [] });
      const byPlugin = await packagesToRemove(dir.path, ["greet", "audit", "bub-plugin-greet"]);
      assert.deepEqual(byPlugin.packages, ["bub-plugin-greet"]);
      assert.match(byPlugin.notes[0]!, /^Plugin 'greet' comes from package bub-plugin-greet, which also provides audit; removing the package\.$/);
      await assert.rejects(packagesToRemove(dir.path, ["nope"]), /^Error: Nothing named 'nope' is installed in .* \(packages: bub-plugin-greet, other; plugins: greet, audit\)\. Give a package or plugin name as `bub plugins` shows it\.$/);
      const npm = recordingNpm();
      const { io, err } = capture();
      assert.equal(await uninstallPlugins({ defaultProject: dir.path, cwd: dir.path, npm, io }, ["greet", "nope"]), 1);
      assert.match(err(), /^bub: Nothing named 'nope'/);
      assert.equal(npm.calls.length, 0, "nothing is removed when one name is unknown");
    } finally {
      await dir.cleanup();
    }
  });
});

describe("install with the real npm and a local plugin package", { skip: hasNpm ? false : "npm is not on PATH" }, () => {
  it("installs the package, its plugins are discovered on the next start, uninstall removes them", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, "home");
      await mkdir(home);
      const { io, out } = capture();
      const quiet = { stdout: { write: () => true }, stderr: { write: () => true } };
      const context: ProjectContext = { defaultProject: join(home, "bub-project"), cwd: dir.path, npm: quietNpm(), io };
      assert.equal(await installPlugins(context, [greetFixture]), 0);
      assert.match(out(), /Plugins: audit \(bub-plugin-greet\), greet \(bub-plugin-greet\)|Plugins: greet \(bub-plugin-greet\), audit \(bub-plugin-greet\)/);
      const framework = await createBub({ workspace: dir.path, home, env: { BUB_HOME: home } });
      const listing = capture();
      await printPlugins(framework, listing.io.stdout);
      assert.match(listing.out(), /ok {5}greet \(project\)/);
      assert.match(listing.out(), /^buildPrompt: greet, builtin$/m);
      assert.equal(await uninstallPlugins({ ...context, io: quiet }, ["bub-plugin-greet"]), 0);
      const after = await createBub({ workspace: dir.path, home, env: { BUB_HOME: home } });
      assert.equal(after.pluginStatus.some((status) => status.name === "greet"), false);
    } finally {
      await dir.cleanup();
    }
  });
});

describe("install with the real npm and a plugin that declares bub-ts as its peer", { skip: hasNpm ? false : "npm is not on PATH" }, () => {
  it("links bub-ts to the running copy instead of fetching it; the plugin shares its classes; uninstall takes the plugin name", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, "home");
      const plugin = join(dir.path, "bub-plugin-hello");
      await cp(helloFixture, plugin, { recursive: true });
      const { io, out } = capture();
      const project = join(home, "bub-project");
      const context: ProjectContext = { defaultProject: project, cwd: dir.path, npm: quietNpm({ npm_config_registry: "http://127.0.0.1:9/" }), io };
      assert.equal(await installPlugins(context, [plugin]), 0, out());
      assert.match(out(), /Plugins: hello \(bub-plugin-hello\)/);
      assert.equal(await readlink(join(project, "node_modules", "bub-ts")), join("..", ".bub-ts"));
      const framework = await createBub({ workspace: dir.path, home, env: { BUB_HOME: home } });
      assert.deepEqual(framework.pluginStatus.find((status) => status.name === "hello"), { name: "hello", ok: true, source: "project", from: "bub-plugin-hello" });
      assert.deepEqual(framework.hookReport().systemPrompt?.[0], "hello");
      const { Command } = await import("commander");
      const app = new Command().exitOverride();
      framework.runtime.callSync("registerCliCommands", { app });
      let printed = "";
      const write = process.stdout.write;
      process.stdout.write = ((text: string) => ((printed += text), true)) as typeof process.stdout.write;
      try {
        await app.parseAsync(["hello-check"], { from: "user" });
      } finally {
        process.stdout.write = write;
      }
      assert.equal(printed, "hello: framework instanceof BubFramework = true\n");
      assert.equal(await uninstallPlugins({ ...context, io: capture().io }, ["hello"]), 0);
      const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8")) as { dependencies: Record<string, string> };
      assert.deepEqual(manifest.dependencies, { "bub-ts": "file:.bub-ts" });
    } finally {
      await dir.cleanup();
    }
  });
});

/** The real npm with its output kept off the test report. */
function quietNpm(env: Record<string, string> = {}): NpmRunner {
  return async (args, options) => {
    const result = spawnSync("npm", [...args, "--loglevel=error"], { cwd: options.cwd, encoding: "utf8", env: { ...process.env, ...env } });
    return result.status ?? 1;
  };
}
