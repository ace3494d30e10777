import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { chmod, readFile, writeFile, mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { BubFramework } from "../../src/builtin/framework.ts";
import { toNpmSpec, type NpmRunner, type ProjectContext } from "../../src/builtin/commands/plugin-project.ts";
import { installPlugins } from "../../src/builtin/commands/install.ts";
import { updatePlugins } from "../../src/builtin/commands/update.ts";
import { uninstallPlugins } from "../../src/builtin/commands/uninstall.ts";
import { printPlugins } from "../../src/builtin/commands/plugins.ts";
import { tempDir } from "../support/temp.ts";

const run = promisify(execFile);
const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));
const greetFixture = fileURLToPath(new URL("../fixtures/plugins/bub-plugin-greet", import.meta.url));
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
      assert.equal(await uninstallPlugins(context, ["a"], { project: "elsewhere" }), 0);
      assert.deepEqual(npm.calls[4], { cwd: join(dir.path, "elsewhere"), args: ["uninstall", "--save", "--no-audit", "--no-fund", "a"] });
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
      assert.match((result as { stderr: string }).stderr, /^bub: Command 'npm install --save --no-audit --no-fund bub-plugin-greet' failed with exit code 3 in .*bub-project\./m);
      assert.equal((await readFile(join(dir.path, "args.txt"), "utf8")).trim(), "install --save --no-audit --no-fund bub-plugin-greet");
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
      const framework = new BubFramework({ workspace: dir.path, home, env: { BUB_HOME: home } });
      await framework.loadPlugins();
      const listing = capture();
      await printPlugins(framework, listing.io.stdout);
      assert.match(listing.out(), /ok {5}greet \(project\)/);
      assert.match(listing.out(), /^buildPrompt: greet, builtin$/m);
      assert.equal(await uninstallPlugins({ ...context, io: quiet }, ["bub-plugin-greet"]), 0);
      const after = new BubFramework({ workspace: dir.path, home, env: { BUB_HOME: home } });
      await after.loadPlugins();
      assert.equal(after.pluginStatus.some((status) => status.name === "greet"), false);
    } finally {
      await dir.cleanup();
    }
  });
});

/** The real npm with its output kept off the test report. */
function quietNpm(): NpmRunner {
  return async (args, options) => {
    const result = spawnSync("npm", [...args, "--loglevel=error"], { cwd: options.cwd, encoding: "utf8" });
    return result.status ?? 1;
  };
}
