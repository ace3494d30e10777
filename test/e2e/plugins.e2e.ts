import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const execute = promisify(execFile);
const fixture = fileURLToPath(new URL("../fixtures/plugins/bub-plugin-hello", import.meta.url));

describe("a packed plugin that declares bub-ts as its peer, installed with the installed bub", () => {
  let home: Awaited<ReturnType<typeof tempHome>>;
  let tarball: string;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    home = await tempHome();
    const { stdout } = await execute("npm", ["pack", "--silent", "--pack-destination", home.path], { cwd: fixture });
    tarball = join(home.path, stdout.trim().split("\n").at(-1)!);
    // No registry answers: installing must not need one (bub-ts is not fetched).
    env = { BUB_HOME: join(home.path, "bub"), npm_config_registry: "http://127.0.0.1:9/", npm_config_update_notifier: "false" };
  });
  after(() => home.cleanup());

  it("installs from the tarball, shows the plugin's hook, shares bub-ts with the CLI, and uninstalls by plugin name", async () => {
    const install = await runBub(["install", tarball], { home: home.path, env, timeoutMs: 120_000 });
    assert.equal(install.code, 0, install.stdout + install.stderr);
    assert.match(install.stdout, /^Plugins: hello \(bub-plugin-hello\)$/m);
    const project = JSON.parse(await readFile(join(home.path, "bub", "bub-project", "package.json"), "utf8")) as { dependencies: Record<string, string> };
    assert.equal(project.dependencies["bub-ts"], "file:.bub-ts");
    const { prefix } = await installedPackage();
    const version = (JSON.parse(await readFile(join(prefix, "node_modules", "bub-ts", "package.json"), "utf8")) as { version: string }).version;
    const stub = JSON.parse(await readFile(join(home.path, "bub", "bub-project", "node_modules", "bub-ts", "package.json"), "utf8")) as { version: string };
    assert.equal(stub.version, version);

    const hooks = await runBub(["hooks"], { home: home.path, env });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.match(hooks.stdout, /^systemPrompt: hello, builtin$/m);
    assert.match(hooks.stdout, /^registerCliCommands: hello, builtin$/m);
    assert.doesNotMatch(hooks.stdout, /Failed plugins/);

    const check = await runBub(["hello-check"], { home: home.path, env });
    assert.equal(check.code, 0, check.stderr);
    assert.equal(check.stdout, "hello: framework instanceof BubFramework = true\n");
    const completion = await runBub(["completion", "bash"], { home: home.path, env });
    assert.equal(completion.code, 0, completion.stderr);
    assert.match(completion.stdout, /^ {6}hello-check\) words=/m, "the plugin's command completes too");

    const uninstall = await runBub(["uninstall", "hello"], { home: home.path, env, timeoutMs: 120_000 });
    assert.equal(uninstall.code, 0, uninstall.stdout + uninstall.stderr);
    assert.match(uninstall.stdout, /^Plugin 'hello' comes from package bub-plugin-hello; removing the package\.$/m);
    const afterHooks = await runBub(["hooks"], { home: home.path, env });
    assert.equal(afterHooks.code, 0, afterHooks.stderr);
    assert.doesNotMatch(afterHooks.stdout, /hello/);
  });

  it("refuses to uninstall a name that is neither an installed package nor a plugin, exit 1", async () => {
    const result = await runBub(["uninstall", "no-such-plugin"], { home: home.path, env });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /^bub: Nothing named 'no-such-plugin' is installed in /);
  });
});
