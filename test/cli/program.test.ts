import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createBub } from "../../src/builtin/create.ts";
import { commandFromArgs, createProgram, untrustedNotice, usageLine, verboseFromArgs } from "../../src/cli/program.ts";
import { tempDir } from "../support/temp.ts";

const run = promisify(execFile);
const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));
const fixtures = fileURLToPath(new URL("../fixtures/plugins/", import.meta.url));

async function bub(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = await tempDir();
  try {
    const result = await run(process.execPath, [bin, ...args], { cwd: dir.path, env: { PATH: process.env.PATH, HOME: dir.path, BUB_HOME: join(dir.path, ".bub"), ...env } });
    return { code: 0, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  } finally {
    await dir.cleanup();
  }
}

describe("bub command line", () => {
  it("prints the version and help, exiting 0", async () => {
    const version = await bub(["--version"]);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    const help = await bub(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: bub \[options\] \[command\]/);
    assert.match(help.stdout, /-w, --workspace <path>/);
  });

  it("lists the builtin plugin's hooks and a listed plugin's, in call order", async () => {
    const result = await bub(["hooks"], { BUB_PLUGINS: join(fixtures, "shout.ts") });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^resolveSession: builtin$/m);
    assert.match(result.stdout, /^buildPrompt: shout, builtin$/m);
    assert.match(result.stdout, /^systemPrompt: builtin$/m);
  });

  it("shows plugins that failed to load with their error", async () => {
    const result = await bub(["hooks"], { BUB_PLUGINS: join(fixtures, "broken-init.js") });
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Failed plugins:\nbroken-init \(config\): cannot start: missing token/);
  });

  it("exits 2 on a usage error", async () => {
    const result = await bub(["no-such-command"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /unknown command 'no-such-command'/);
  });

  it("exits 1 with one readable line for a broken config file, whatever the command", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "config.yml");
      await writeFile(file, "model: a:b\nmax_steps: 3\n  fallback_models: [x\n");
      for (const args of [["hooks"], ["run", "hi"], ["--help"]]) {
        const result = await run(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, BUB_HOME: dir.path } }).catch((error) => error as { code: number; stderr: string });
        assert.equal((result as { code: number }).code, 1, args.join(" "));
        assert.equal(
          (result as { stderr: string }).stderr,
          `bub: ${file} line 2, column 12: nested mappings are not allowed in compact mappings (quote a value that contains ': ', or indent the next line less) — fix the file or run bub onboard\n`,
        );
      }
    } finally {
      await dir.cleanup();
    }
  });

  it("exits 1 listing every invalid setting, each with its variable or key, value and what is allowed", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "config.yml");
      await writeFile(file, "max_tokens: -1\nadmission: later\n");
      const result = await run(process.execPath, [bin, "run", "hi"], { env: { PATH: process.env.PATH, BUB_HOME: dir.path, BUB_MAX_STEPS: "abc" } }).catch((error) => error as { code: number; stderr: string });
      assert.equal((result as { code: number }).code, 1);
      assert.equal(
        (result as { stderr: string }).stderr,
        [
          "bub: 3 invalid settings — fix them, or remove them to use the defaults:",
          "  - BUB_MAX_STEPS=abc: expected a whole number greater than 0",
          `  - max_tokens: -1 (${file} line 1): expected a whole number greater than 0`,
          `  - admission: "later" (${file} line 2): expected one of concurrent, follow_up, steer, collect, interrupt`,
          "",
        ].join("\n"),
      );
    } finally {
      await dir.cleanup();
    }
  });
});

describe("building only the command that runs", () => {
  const io = { stdout: { write: () => true }, stderr: { write: () => true } };
  const names = async (argv?: string[]) => {
    const framework = await createBub({ workspace: "/tmp", home: "/nonexistent-bub-home", env: {} });
    return (await createProgram(framework, io, argv)).commands.map((command) => command.name());
  };

  it("finds the subcommand after global options, and none for help, the version or no command", () => {
    assert.equal(commandFromArgs(["run", "hi"]), "run");
    assert.equal(commandFromArgs(["-w", "/tmp/x", "chat"]), "chat");
    assert.equal(commandFromArgs(["--workspace=/tmp/x", "gateway", "--help"]), "gateway");
    assert.equal(commandFromArgs(["--help"]), undefined);
    assert.equal(commandFromArgs(["-V"]), undefined);
    assert.equal(commandFromArgs(["help", "run"]), undefined);
    assert.equal(commandFromArgs([]), undefined);
    assert.equal(commandFromArgs(["-w"]), undefined);
  });

  it("registers just that builtin command, and all of them for help or a name it does not know", async () => {
    assert.deepEqual(await names(["run", "hi"]), ["run"]);
    const all = ["run", "chat", "install", "update", "uninstall", "plugins", "plugin", "onboard", "gateway", "hooks", "trust", "models", "tape", "cost", "queue", "delivery", "login", "logout", "ui", "mcp", "acp", "link", "replay", "completion"];
    assert.deepEqual(await names(["--help"]), all);
    assert.deepEqual(await names(["rnu"]), all);
    assert.deepEqual(await names(), all);
  });
});

describe("usage errors and --verbose", () => {
  it("rewords commander's error as one bub line naming the help to read", () => {
    assert.equal(usageLine("error: unknown command 'rn'\n(Did you mean run?)\n", "bub"), "bub: unknown command 'rn' (did you mean run?) — run `bub --help` for usage\n");
    assert.equal(usageLine("error: missing required argument 'message'\n", "bub run"), "bub: missing required argument 'message' — run `bub run --help` for usage\n");
  });

  it("finds --verbose before `--` only, and skips it when looking for the command", () => {
    assert.equal(verboseFromArgs(["run", "hi", "--verbose"]), true);
    assert.equal(verboseFromArgs(["run", "--", "--verbose"]), false);
    assert.equal(commandFromArgs(["--verbose", "run", "hi"]), "run");
    assert.equal(commandFromArgs(["completion", "bash"]), undefined);
  });
});

describe("the untrusted-folder notice", () => {
  const none = { workspace: "/w", packagePlugins: [], listedPlugins: [] };
  it("is one line naming what was skipped and how to trust the folder, and nothing when nothing was skipped", () => {
    assert.equal(untrustedNotice("/w", null, null), null);
    assert.equal(untrustedNotice("/w", none, null), null);
    assert.equal(
      untrustedNotice("/w", { ...none, packagePlugins: ["x"] }, "/w"),
      "bub: this folder is not trusted, so its package.json plugins and .env were not loaded — run `bub trust` to trust /w\n",
    );
    assert.equal(untrustedNotice("/w", null, "/w"), "bub: this folder is not trusted, so its .env was not loaded — run `bub trust` to trust /w\n");
    assert.equal(untrustedNotice("/w", null, "/c"), "bub: this folder is not trusted, so its .env was not loaded — run `bub trust /c` to trust /c\n");
    assert.equal(
      untrustedNotice("/w", { ...none, listedPlugins: ["/w/p.js"] }, "/c"),
      "bub: these folders are not trusted, so /w's plugins inside it (/w/p.js) and /c's .env were not loaded — run `bub trust /w` and `bub trust /c` to trust them\n",
    );
  });
});
