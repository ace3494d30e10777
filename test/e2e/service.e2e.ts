/**
 * `bub gateway install` of the installed package on Linux: the systemd user unit under a
 * temporary HOME runs that package's bub with the absolute node, with BUB_HOME and no
 * secret; `--print` shows the same text without writing; `uninstall` removes it.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { access, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { installedPackage, runBub, tempHome, type InstalledPackage } from "./support/installed.ts";

const execute = promisify(execFile);

/** The words of a systemd ExecStart line (double-quoted, as bub writes them). */
function execWords(line: string): string[] {
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!.replace(/\\(.)/g, "$1").replaceAll("%%", "%").replaceAll("$$", "$"));
}

describe("bub gateway install (installed package, Linux)", { skip: process.platform !== "linux" && "systemd units are written on Linux" }, () => {
  let pkg: InstalledPackage;
  let home: Awaited<ReturnType<typeof tempHome>>;
  before(async () => {
    pkg = await installedPackage();
    home = await tempHome();
  });
  after(() => home.cleanup());

  it("writes a unit that runs this package's bub gateway with BUB_HOME, and removes it again", async () => {
    const bubHome = join(home.path, ".bub");
    const env = { BUB_HOME: bubHome, BUB_TELEGRAM_TOKEN: "123456:E2E-SECRET-TOKEN" };
    const printed = await runBub(["gateway", "install", "--print"], { home: home.path, env });
    assert.equal(printed.code, 0, printed.stderr);
    const unitPath = join(home.path, ".config", "systemd", "user", "bub-gateway.service");
    await assert.rejects(access(unitPath), "--print writes nothing");

    const installed = await runBub(["gateway", "install", "--enable-channel", "telegram"], { home: home.path, env });
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, new RegExp(`^wrote ${unitPath.replaceAll(".", "\\.")}\n`));
    assert.match(installed.stdout, /^ {2}systemctl --user enable --now bub-gateway\.service$/m);
    assert.match(installed.stdout, /Not in the service: BUB_TELEGRAM_TOKEN/);
    const unit = await readFile(unitPath, "utf8");
    assert.equal(unit, printed.stdout.replace('"gateway"', '"gateway" "--enable-channel" "telegram"'), "--print shows what install writes");
    assert.doesNotMatch(unit, /E2E-SECRET-TOKEN/);

    const execStart = unit.split("\n").find((line) => line.startsWith("ExecStart="))!;
    const [node, bin, ...args] = execWords(execStart.slice("ExecStart=".length));
    assert.equal(node, process.execPath, "the node that ran bub");
    assert.equal(bin, await realpath(join(pkg.prefix, "node_modules", "bub-ts", "dist", "bin", "bub.js")));
    assert.deepEqual(args, ["gateway", "--enable-channel", "telegram"]);
    assert.match(unit, new RegExp(`^Environment="BUB_HOME=${bubHome.replaceAll(".", "\\.")}"$`, "m"));
    assert.match(unit, /^Restart=on-failure$/m);
    assert.match(unit, new RegExp(`^StandardError=append:${join(bubHome, "logs", "gateway.log").replaceAll(".", "\\.")}$`, "m"));
    await access(join(bubHome, "logs"));
    // The command the unit runs is a working bub.
    const help = await execute(node!, [bin!, "gateway", "--help"], { env: { PATH: process.env.PATH, HOME: home.path, BUB_HOME: bubHome } });
    assert.match(help.stdout, /^Usage: bub gateway/);

    const removed = await runBub(["gateway", "uninstall"], { home: home.path, env });
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /^removed .*bub-gateway\.service\n/);
    await assert.rejects(access(unitPath));
  });

  it("honours XDG_CONFIG_HOME", async () => {
    const config = join(home.path, "xdg");
    const result = await runBub(["gateway", "install"], { home: home.path, env: { BUB_HOME: join(home.path, ".bub"), XDG_CONFIG_HOME: config } });
    assert.equal(result.code, 0, result.stderr);
    await access(join(config, "systemd", "user", "bub-gateway.service"));
  });
});
