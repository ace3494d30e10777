import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { lstat, mkdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "../support/temp.ts";
import { renderLaunchdPlist, renderSystemdUnit, type ServiceSpec } from "../../src/service/units.ts";
import { installService, servicePlan, serviceKind, uninstallService } from "../../src/service/install.ts";

const spec: ServiceSpec = {
  node: "/opt/node 24/bin/node",
  bin: "/usr/lib/node_modules/bub-ts/dist/bin/bub.js",
  args: ["gateway", "--enable-channel", "telegram"],
  workingDirectory: "/home/ada/agent",
  environment: { BUB_HOME: "/home/ada/.bub", PATH: "/usr/local/bin:/usr/bin" },
  logFile: "/home/ada/.bub/logs/gateway.log",
  stopTimeoutSeconds: 30,
};

describe("service units", () => {
  it("renders a systemd user unit that runs bub gateway with BUB_HOME, restarts on failure and logs to the file", () => {
    const unit = renderSystemdUnit(spec);
    const lines = unit.split("\n");
    assert.ok(lines.includes('ExecStart="/opt/node 24/bin/node" "/usr/lib/node_modules/bub-ts/dist/bin/bub.js" "gateway" "--enable-channel" "telegram"'));
    assert.ok(lines.includes("WorkingDirectory=/home/ada/agent"));
    assert.ok(lines.includes('Environment="BUB_HOME=/home/ada/.bub"'));
    assert.ok(lines.includes('Environment="PATH=/usr/local/bin:/usr/bin"'));
    assert.ok(lines.includes("Restart=on-failure"));
    assert.ok(lines.includes("TimeoutStopSec=30"));
    assert.ok(lines.includes("StandardOutput=append:/home/ada/.bub/logs/gateway.log"));
    assert.ok(lines.includes("StandardError=append:/home/ada/.bub/logs/gateway.log"));
    assert.ok(lines.includes("WantedBy=default.target"));
    assert.deepEqual(
      lines.filter((line) => line.startsWith("[")),
      ["[Unit]", "[Service]", "[Install]"],
    );
  });

  it("escapes what systemd would expand or split", () => {
    const unit = renderSystemdUnit({ ...spec, bin: '/home/a "b"/100%/$HOME\\bub.js', workingDirectory: "/w/50%", environment: { BUB_HOME: "/h/$x%y" } });
    assert.match(unit, /^ExecStart="\/opt\/node 24\/bin\/node" "\/home\/a \\"b\\"\/100%%\/\$\$HOME\\\\bub\.js" "gateway"/m);
    assert.match(unit, /^WorkingDirectory=\/w\/50%%$/m);
    assert.match(unit, /^Environment="BUB_HOME=\/h\/\$x%%y"$/m);
  });

  it("renders a launchd agent with the same command, environment, restart and log", () => {
    const plist = renderLaunchdPlist({ ...spec, environment: { ...spec.environment, BUB_HOME: "/Users/ada/<bub> & co" } });
    assert.match(plist, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<!DOCTYPE plist /);
    assert.match(plist, /<key>Label<\/key><string>bub-ts\.gateway<\/string>/);
    assert.match(
      plist,
      /<key>ProgramArguments<\/key>\n {2}<array>\n {4}<string>\/opt\/node 24\/bin\/node<\/string>\n {4}<string>\/usr\/lib\/node_modules\/bub-ts\/dist\/bin\/bub\.js<\/string>\n {4}<string>gateway<\/string>\n {4}<string>--enable-channel<\/string>\n {4}<string>telegram<\/string>\n {2}<\/array>/,
    );
    assert.match(plist, /<key>BUB_HOME<\/key><string>\/Users\/ada\/&lt;bub&gt; &amp; co<\/string>/);
    assert.match(plist, /<key>KeepAlive<\/key>\n {2}<dict>\n {4}<key>SuccessfulExit<\/key><false\/>/);
    assert.match(plist, /<key>RunAtLoad<\/key><true\/>/);
    assert.match(plist, /<key>StandardOutPath<\/key><string>\/home\/ada\/\.bub\/logs\/gateway\.log<\/string>/);
    assert.match(plist, /<key>StandardErrorPath<\/key><string>\/home\/ada\/\.bub\/logs\/gateway\.log<\/string>/);
    assert.match(plist, /<key>WorkingDirectory<\/key><string>\/home\/ada\/agent<\/string>/);
  });

  it("puts the unit under XDG_CONFIG_HOME (else ~/.config) on Linux and ~/Library/LaunchAgents on macOS, with no secret", () => {
    const env = { HOME: "/home/ada", PATH: "/usr/bin", BUB_TELEGRAM_TOKEN: "123456:SECRET-TOKEN", BUB_API_KEY: "sk-secret-key-value" };
    const common = { home: "/home/ada/.bub", node: "/usr/bin/node", bin: "/b/bub.js", workingDirectory: "/home/ada" };
    const linux = servicePlan({ ...common, platform: "linux", env });
    assert.equal(linux.kind, "systemd");
    assert.equal(linux.path, "/home/ada/.config/systemd/user/bub-gateway.service");
    assert.equal(linux.logFile, "/home/ada/.bub/logs/gateway.log");
    assert.deepEqual(linux.startCommands.slice(0, 2), ["systemctl --user daemon-reload", "systemctl --user enable --now bub-gateway.service"]);
    assert.equal(servicePlan({ ...common, platform: "linux", env: { ...env, XDG_CONFIG_HOME: "/cfg" } }).path, "/cfg/systemd/user/bub-gateway.service");
    const mac = servicePlan({ ...common, platform: "darwin", env });
    assert.equal(mac.kind, "launchd");
    assert.equal(mac.path, "/home/ada/Library/LaunchAgents/bub-ts.gateway.plist");
    for (const plan of [linux, mac]) {
      assert.doesNotMatch(plan.content, /SECRET|sk-secret/);
      assert.match(plan.content, /\/home\/ada\/\.bub/);
    }
    assert.throws(() => serviceKind("win32"), /writes a systemd unit \(Linux\) or a launchd agent \(macOS\), not a win32 service/);
  });

  it("writes the unit and the log folder, and uninstall removes it with its enable link", async () => {
    const dir = await tempDir();
    try {
      const plan = servicePlan({ platform: "linux", env: { HOME: dir.path }, home: join(dir.path, ".bub"), node: "/n", bin: "/b" });
      assert.equal(await installService(plan), false);
      assert.equal(await readFile(plan.path, "utf8"), plan.content);
      assert.ok((await lstat(join(dir.path, ".bub", "logs"))).isDirectory());
      assert.equal(await installService(plan), true, "a second install replaces the file");
      const wants = join(dir.path, ".config", "systemd", "user", "default.target.wants");
      await mkdir(wants, { recursive: true });
      await symlink(plan.path, join(wants, "bub-gateway.service"));
      assert.equal(await uninstallService(plan), true);
      await assert.rejects(lstat(plan.path), { code: "ENOENT" });
      await assert.rejects(lstat(join(wants, "bub-gateway.service")), { code: "ENOENT" });
      assert.equal(await uninstallService(plan), false);
    } finally {
      await dir.cleanup();
    }
  });
});
