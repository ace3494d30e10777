// How the host sandbox starts commands: the launchers tried per platform and user, exit
// codes through a PID namespace, a SIGTERM sent at once, no bub process visible to a command,
// and nothing left running when the process that started it is SIGKILLed.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import type { SandboxProcess } from "../../src/kernel/sandbox.ts";
import { exitCodeOf } from "../../src/tools/host-exec.ts";
import { hostLauncher, launcherCandidates } from "../../src/tools/host-isolation.ts";
import { createHostSandbox, isolationEnabled } from "../../src/tools/sandbox-host.ts";
import { processesGone, processesStarted, uniqueSeconds } from "../support/processes.ts";

function run(command: string, isolation = true): { running: SandboxProcess; output: () => string } {
  let text = "";
  const running = createHostSandbox({ workspace: "/tmp", shell: "/bin/sh", isolation: () => isolation }).exec({ command, cwd: "/tmp" }, (chunk) => (text += Buffer.from(chunk).toString()));
  return { running, output: () => text };
}

describe("host isolation", () => {
  it("tries the PID namespace first on Linux (without a user namespace for root), then the parent-death signal, then nothing", () => {
    assert.deepEqual(launcherCandidates("darwin", 501).map((launcher) => launcher.kind), ["plain"]);
    assert.deepEqual(launcherCandidates("linux", 1000).map((launcher) => launcher.kind), ["namespace", "pdeathsig", "plain"]);
    assert.deepEqual(launcherCandidates("linux", 0).map((launcher) => launcher.kind), ["namespace", "namespace", "pdeathsig", "plain"]);
    const [asRoot, asRootInUserNamespace] = launcherCandidates("linux", 0);
    assert.ok(!asRoot!.argv("/bin/sh", "x").includes("--map-current-user"));
    assert.ok(asRoot!.argv("/bin/sh", "x").some((arg) => arg.startsWith("--bounding-set=-sys_admin,")));
    assert.ok(asRootInUserNamespace!.argv("/bin/sh", "x").includes("--map-current-user"));
    const user = launcherCandidates("linux", 1000)[0]!.argv("/bin/sh", "x");
    assert.ok(user.includes("--map-current-user") && !user.some((arg) => arg.startsWith("--bounding-set")), "no capabilities to drop for a user");
  });

  it("reads the setting: off only for false", () => {
    assert.deepEqual([true, false, "false", " OFF ", "0", "no", "true", undefined, null].map(isolationEnabled), [true, false, false, false, false, false, true, true, true]);
  });

  it("reports minus the signal for a command ended by a signal bub sent, the code otherwise", () => {
    assert.equal(exitCodeOf(null, "SIGKILL", new Set()), -9);
    assert.equal(exitCodeOf(143, null, new Set([15])), -15);
    assert.equal(exitCodeOf(143, null, new Set()), 143);
    assert.equal(exitCodeOf(3, null, new Set([15])), 3);
  });

  it("passes exit codes through and ends a command on a SIGTERM sent right after the start", async () => {
    assert.equal(await run("exit 7").running.exited, 7);
    const seconds = uniqueSeconds();
    const sleeper = run(`sleep ${seconds}; echo after`);
    sleeper.running.kill("SIGTERM");
    assert.equal(await sleeper.running.exited, -15);
    await sleeper.running.closed;
    assert.equal(sleeper.output(), "");
    assert.deepEqual(await processesGone(seconds), []);
  });

  it("in a PID namespace, a command sees no process but its own, and a pid of bub's is not there", async (t) => {
    if ((await hostLauncher("/bin/sh")).kind !== "namespace") return t.skip("no PID namespace on this machine");
    const shell = run(`echo $$; for d in /proc/[0-9]*; do cat $d/cmdline 2>/dev/null | tr '\\0' ' '; echo; done; if test -e /proc/${process.pid}/environ; then echo visible; fi`);
    assert.equal(await shell.running.exited, 0);
    const [self, ...cmdlines] = shell.output().trim().split("\n");
    assert.equal(self, "2", "the namespace's first process is the launcher's, the command comes next");
    assert.ok(!cmdlines.includes("visible"), "this process's /proc entry is not there");
    assert.ok(!cmdlines.some((line) => line.includes(process.argv[1] ?? "host-isolation.test")), "the test process is not listed");
    const off = run(`if test -e /proc/${process.pid}/environ; then echo visible; fi`, false);
    assert.equal(await off.running.exited, 0);
    assert.equal(off.output(), "visible\n", "tool_isolation=false runs on the host's /proc");
  });

  it("a SIGKILLed parent takes the command and every process it started with it", async () => {
    const seconds = uniqueSeconds();
    const module = new URL("../../src/tools/sandbox-host.ts", import.meta.url).href;
    const script = `import { createHostSandbox } from ${JSON.stringify(module)};
      createHostSandbox({ workspace: "/tmp", shell: "/bin/sh" }).exec({ command: "sleep ${seconds} & setsid sleep ${seconds} & sleep ${seconds}", cwd: "/tmp" }, () => {});
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" });
    try {
      await processesStarted(`sleep ${seconds}`);
      parent.kill("SIGKILL");
      const left = await processesGone(seconds);
      if ((await hostLauncher("/bin/sh")).kind === "namespace") assert.deepEqual(left, [], "nothing outlives the parent");
      else assert.ok(left.length <= 1, "only the setsid child may be left without a PID namespace");
    } finally {
      parent.kill("SIGKILL");
    }
  });
});
