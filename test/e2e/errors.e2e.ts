/**
 * What a script sees of the installed `bub` when things go wrong: errors on stderr only,
 * once, as `bub: <what happened> — <what to do>`; exit 1 for a failure and 2 for a usage
 * error; `--verbose` adding the cause; a reader that closes stdout early ending the command
 * quietly with status 0; the turn error in `<BUB_HOME>/logs/bub.log` with its session id;
 * completion scripts for bash, zsh and fish.
 */
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { cleanEnv, installedPackage, runBub, tempHome, type BubResult } from "./support/installed.ts";

const execute = promisify(execFile);

/** Runs the installed bub with its stdout closed by the reader before bub writes anything. */
async function runWithClosedStdout(args: readonly string[], home: string, env: Record<string, string>): Promise<BubResult> {
  const { bin } = await installedPackage();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: home, env: cleanEnv(home, env), stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: "", stderr });
    });
  });
}

function has(shell: string): boolean {
  return spawnSync(shell, ["-c", "exit 0"]).status === 0;
}

describe("errors, exit codes and pipes of the installed bub", () => {
  let server: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    server = await startFakeOpenAI();
    home = await tempHome();
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-e2e-errors-key" };
  });
  after(async () => {
    await server.close();
    await home.cleanup();
  });

  it("a failing model: one line on stderr, nothing on stdout, exit 1, and the turn error in the log file with its session id", async () => {
    server.script(reply.error(401, "Incorrect API key provided"));
    const started = new Date();
    const result = await runBub(["run", "--session-id", "errors-e2e", "hello"], { home: home.path, env });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, "", "a script reading stdout sees no error text as an answer");
    assert.equal(result.stderr, "bub: local:any returned HTTP 401: Incorrect API key provided — check the API key (BUB_LOCAL_API_KEY or BUB_API_KEY)\n");

    const log = await readFile(join(env.BUB_HOME!, "logs", "bub.log"), "utf8");
    const line = log.split("\n").find((each) => /ERROR \S+ turn\.error .*session_id=errors-e2e/.test(each));
    assert.ok(line, log);
    const time = new Date(line.split(" ")[0]!);
    assert.ok(time.getTime() >= started.getTime() - 1000 && time.getTime() <= Date.now(), line);
    assert.match(line, /Incorrect API key provided/);
    assert.doesNotMatch(log, /sk-e2e-errors-key/, "the key is redacted in the log");
  });

  it("piped `bub chat`: a failing turn's error goes to stderr as a `bub:` line, the answers stay on stdout", async () => {
    server.script(reply.error(401, "Incorrect API key provided"));
    server.script(reply.text("second answer"));
    const result = await runBub(["chat"], { home: home.path, env, input: "first\nsecond\n,quit\n" });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^bub: .*HTTP 401: Incorrect API key provided/m);
    assert.doesNotMatch(result.stdout, /401|Incorrect API key/, "no error text among the answers");
    assert.match(result.stdout, /second answer/);
  });

  it("--verbose adds the provider's answer under the line; the line itself stays the same", async () => {
    server.script(reply.error(401, "Incorrect API key provided"));
    const result = await runBub(["--verbose", "run", "hello"], { home: home.path, env });
    assert.equal(result.code, 1, result.stderr);
    const [first, ...rest] = result.stderr.trimEnd().split("\n");
    assert.match(first!, /^bub: local:any returned HTTP 401: Incorrect API key provided — check the API key/);
    assert.ok(rest.length > 0, result.stderr);
    assert.ok(rest.every((line) => line.startsWith("  ")), result.stderr);
    assert.match(rest.join("\n"), /"status":401/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace without BUB_DEBUG");
  });

  it("a temporary failure is retried quietly: still one line, exit 1", async () => {
    server.script(reply.error(503, "overloaded"), reply.error(503, "overloaded"), reply.error(503, "overloaded"));
    const result = await runBub(["run", "hello"], { home: home.path, env });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, "");
    assert.equal(result.stderr, "bub: local:any returned HTTP 503: overloaded — try again in a moment\n");
  });

  it("usage errors exit 2 with one line naming the help to read", async () => {
    const cases: [string[], RegExp][] = [
      [["no-such-command"], /^bub: unknown command 'no-such-command' — run `bub --help` for usage\n$/],
      [["rn", "hi"], /^bub: unknown command 'rn' \(did you mean run\?\) — run `bub --help` for usage\n$/],
      [["run", "--sesion-id", "x", "hi"], /^bub: unknown option '--sesion-id' \(did you mean --session-id\?\) — run `bub run --help` for usage\n$/],
      [["run"], /^bub: missing required argument 'message' — run `bub run --help` for usage\n$/],
      [["completion", "ksh"], /^bub: .*'ksh'.*bash, zsh, fish — run `bub completion --help` for usage\n$/],
    ];
    for (const [args, expected] of cases) {
      const result = await runBub(args, { home: home.path, env });
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.equal(result.stdout, "", args.join(" "));
      assert.match(result.stderr, expected);
    }
  });

  it("a reader that closes stdout early ends the command quietly with status 0", async () => {
    server.script(reply.text("A long answer. ".repeat(2000)));
    for (const args of [["hooks"], ["--help"], ["run", "hello"], ["completion", "bash"]]) {
      const result = await runWithClosedStdout(args, home.path, env);
      assert.equal(result.stderr, "", `${args.join(" ")}: ${result.stderr}`);
      assert.equal(result.code, 0, args.join(" "));
    }
  });

  it("in a shell pipeline (`bub hooks | true`, `bub run ... | head -c 10`) too", async () => {
    const { bin } = await installedPackage();
    server.script(reply.text("A long answer. ".repeat(5000)));
    const script = `"$BUB" hooks | true; echo "hooks=\${PIPESTATUS[0]}"; "$BUB" run hello | head -c 10 >/dev/null; echo "run=\${PIPESTATUS[0]}"`;
    // Not spawnSync: the fake model server answers from this process.
    const result = await execute("bash", ["-c", script], { cwd: home.path, env: { ...cleanEnv(home.path, env), BUB: bin }, encoding: "utf8", timeout: 30_000 });
    assert.equal(result.stdout, "hooks=0\nrun=0\n", result.stderr);
    assert.equal(result.stderr, "");
  });

  it("prints completion scripts for bash, zsh and fish", async () => {
    const bash = await runBub(["completion", "bash"], { home: home.path, env });
    assert.equal(bash.code, 0, bash.stderr);
    execFileSync("bash", ["-n"], { input: bash.stdout });
    assert.match(bash.stdout, /complete -o default -F _bub_completion bub/);
    for (const command of ["run", "chat", "gateway", "onboard", "completion"]) assert.match(bash.stdout, new RegExp(`\\b${command}\\b`));
    const zsh = await runBub(["completion", "zsh"], { home: home.path, env });
    assert.equal(zsh.code, 0, zsh.stderr);
    assert.match(zsh.stdout, /^#compdef bub\n/);
    if (has("zsh")) execFileSync("zsh", ["-n"], { input: zsh.stdout });
    const fish = await runBub(["completion", "fish"], { home: home.path, env });
    assert.equal(fish.code, 0, fish.stderr);
    assert.match(fish.stdout, /^complete -c bub -n __fish_use_subcommand -a 'run' /m);
    if (has("fish")) {
      const file = join(home.path, "bub.fish");
      await writeFile(file, fish.stdout);
      execFileSync("fish", ["--no-execute", file]);
    }
  });
});
