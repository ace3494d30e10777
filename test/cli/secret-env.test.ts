// Secrets out of bub's environment block: which variables move, the encrypted handoff file,
// and the re-execution that leaves /proc/<pid>/environ without them.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { HANDOFF_VARIABLE, keepSecretsOffEnvironment, readHandoff, secretVariableNames, writeHandoff, type SecretEnvProcess } from "../../src/cli/secret-env.ts";
import { tempDir } from "../support/temp.ts";

describe("secrets out of the environment block", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    dir = await tempDir("bub-secret-env-");
  });
  after(() => dir.cleanup());

  it("moves bub's secret variables and every other secret-looking one, nothing else", () => {
    const env = { PATH: "/bin", BUB_API_KEY: "sk-1", OPENAI_API_KEY: "sk-2", GITHUB_TOKEN: "gh", BUB_MODEL: "x", BUB_TOOL_ENV_PASSTHROUGH: "GITHUB_TOKEN", EMPTY_TOKEN: "" };
    assert.deepEqual(secretVariableNames(env), ["BUB_API_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY"]);
    assert.deepEqual(secretVariableNames({ PATH: "/bin", HOME: "/root" }), []);
  });

  it("hands secrets over in an encrypted 0600 file in a 0700 folder, deleted when read", () => {
    const value = writeHandoff({ BUB_API_KEY: "sk-handoff-secret" }, dir.path);
    const file = value.slice(0, value.lastIndexOf("#"));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(file)).mode & 0o777, 0o700);
    assert.deepEqual(readHandoff(value), { BUB_API_KEY: "sk-handoff-secret" });
    assert.equal(existsSync(dirname(file)), false, "file and folder are gone");
    assert.throws(() => readHandoff(value), /ENOENT/);
  });

  it("refuses a handoff file that was changed or a key that does not fit", () => {
    const value = writeHandoff({ BUB_API_KEY: "sk-handoff-secret" }, dir.path);
    const file = value.slice(0, value.lastIndexOf("#"));
    writeFileSync(file, Buffer.alloc(64, 1));
    assert.throws(() => readHandoff(value), /unable to authenticate|Unsupported state/);
    assert.equal(existsSync(dirname(file)), false);
    const other = writeHandoff({ A_TOKEN: "x" }, dir.path);
    assert.throws(() => readHandoff(`${other.slice(0, other.lastIndexOf("#"))}#AAAA`), /not bub's/);
    assert.throws(() => readHandoff("no-key-here"), /malformed/);
  });

  it("re-executes without the secrets, and the new image puts them back on the heap only", () => {
    const calls: { file: string; args: string[]; env: Record<string, string> }[] = [];
    const proc = (env: NodeJS.ProcessEnv): SecretEnvProcess => ({
      env,
      execPath: "/usr/bin/node",
      execArgv: ["--flag"],
      script: "/bin/bub.js",
      args: ["run", "hi"],
      execve: (file, args, childEnv) => {
        calls.push({ file, args, env: childEnv });
        throw new Error("stop here");
      },
      warn: () => {},
    });
    const first = { PATH: "/bin", BUB_API_KEY: "sk-reexec-secret" };
    assert.equal(keepSecretsOffEnvironment(proc(first)), null, "a failed execve leaves things as they were");
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]!.args, ["/usr/bin/node", "--flag", "/bin/bub.js", "run", "hi"]);
    assert.deepEqual(Object.keys(calls[0]!.env).sort(), [HANDOFF_VARIABLE, "PATH"]);
    assert.equal(first.BUB_API_KEY, "sk-reexec-secret");
    const handoff = calls[0]!.env[HANDOFF_VARIABLE]!;
    assert.equal(existsSync(handoff.slice(0, handoff.lastIndexOf("#"))), false, "the failed execve's handoff is removed");

    let handedEnv: Record<string, string> = {};
    const handed: SecretEnvProcess = {
      ...proc({ PATH: "/bin", BUB_API_KEY: "sk-reexec-secret" }),
      execve: (_file, _args, childEnv) => {
        handedEnv = childEnv;
        return undefined as never;
      },
    };
    keepSecretsOffEnvironment(handed);
    const next: NodeJS.ProcessEnv = { ...handedEnv };
    assert.equal(keepSecretsOffEnvironment(proc(next)), null);
    assert.deepEqual(next, { PATH: "/bin", BUB_API_KEY: "sk-reexec-secret" }, "the handoff variable is gone, the secret back");
    assert.equal(calls.length, 1, "the new image does not re-execute again");
  });

  it("says in one line when the handoff cannot be read, and does nothing without secrets", () => {
    const missing = { [HANDOFF_VARIABLE]: `${join(dir.path, "gone", "secrets")}#${Buffer.alloc(32).toString("base64url")}` };
    const line = keepSecretsOffEnvironment({ env: missing, execPath: "", execArgv: [], script: "", args: [], warn: () => {} });
    assert.match(line ?? "", /^bub: cannot read the secrets handed over at start \(ENOENT.*\) — start bub again$/);
    let called = false;
    const plain = { PATH: "/bin" };
    assert.equal(keepSecretsOffEnvironment({ env: plain, execPath: "", execArgv: [], script: "", args: [], execve: () => ((called = true) as never), warn: () => {} }), null);
    assert.equal(called, false);
  });

  it("with process.execve: the same pid runs on with the secret in process.env, not in /proc/self/environ, and no warning", async () => {
    const module = new URL("../../src/cli/secret-env.ts", import.meta.url).href;
    const script = join(dir.path, "reexec.ts");
    writeFileSync(
      script,
      `import { readFileSync } from "node:fs";
       import { keepSecretsOffEnvironment } from ${JSON.stringify(module)};
       const pid = process.pid;
       const line = keepSecretsOffEnvironment({ env: process.env, execPath: process.execPath, execArgv: process.execArgv, script: process.argv[1], args: process.argv.slice(2), execve: process.execve?.bind(process), warn: (text) => console.error(text) });
       if (line) { console.error(line); process.exit(1); }
       console.log(JSON.stringify({ pid, args: process.argv.slice(2), key: process.env.BUB_API_KEY, environ: readFileSync("/proc/self/environ", "latin1").includes("sk-reexec-secret") }));`,
    );
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile(process.execPath, [script, "a", "b"], { env: { PATH: process.env.PATH, BUB_API_KEY: "sk-reexec-secret" } }, (error, out, err) => (error ? reject(error) : resolve({ stdout: out, stderr: err }))),
    );
    assert.equal(stderr, "");
    const seen = JSON.parse(stdout) as { pid: number; args: string[]; key: string; environ: boolean };
    assert.deepEqual([seen.args, seen.key, seen.environ], [["a", "b"], "sk-reexec-secret", false]);
  });
});
