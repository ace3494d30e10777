import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Option } from "commander";
import { createBub } from "../../src/builtin/create.ts";
import { createProgram } from "../../src/cli/program.ts";
import { completionScript } from "../../src/cli/completion.ts";
import { tempDir } from "../support/temp.ts";

const io = { stdout: { write: () => true }, stderr: { write: () => true } };

/** The program as `bub completion` sees it, with a plugin's `weather` command. */
async function program() {
  const framework = await createBub({ workspace: "/tmp", home: "/nonexistent-bub-home", env: {} });
  await framework.registerPlugin({
    name: "weather",
    registerCliCommands({ app }) {
      app
        .command("weather")
        .description("today's weather: it's sunny")
        .option("--city <name>", "where [default: here]")
        .addOption(new Option("--units <units>", "how to measure").choices(["metric", "imperial"]));
    },
  });
  return createProgram(framework, io, ["completion", "bash"]);
}

function has(shell: string): boolean {
  return spawnSync(shell, ["-c", "exit 0"]).status === 0;
}

/** What bash completes for `words` (the last one being the word under the cursor). */
function bashComplete(script: string, words: string[]): string[] {
  const array = words.map((word) => `'${word}'`).join(" ");
  const out = execFileSync("bash", ["-c", `${script}\nCOMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _bub_completion; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: "utf8" });
  return out.split("\n").filter(Boolean);
}

describe("bub completion", () => {
  it("bash: a valid script that completes commands (a plugin's too), options and choices", async () => {
    const script = completionScript(await program(), "bash");
    execFileSync("bash", ["-n"], { input: script });
    assert.deepEqual(bashComplete(script, ["bub", "we"]), ["weather"]);
    assert.deepEqual(bashComplete(script, ["bub", "-w", "/tmp", "run", "--se"]), ["--sender-id", "--session-id"]);
    assert.deepEqual(bashComplete(script, ["bub", "weather", "--units", ""]), ["metric", "imperial"]);
    assert.deepEqual(bashComplete(script, ["bub", "completion", "z"]), ["zsh"]);
    assert.ok(bashComplete(script, ["bub", "--"]).includes("--verbose"));
  });

  it("zsh: describes the commands with quotes and colons escaped", { skip: !has("zsh") && "zsh is not installed" }, async () => {
    const script = completionScript(await program(), "zsh");
    execFileSync("zsh", ["-n"], { input: script });
    assert.match(script, /^#compdef bub\n/);
    assert.match(script, /'weather:today'\\''s weather\\: it'\\''s sunny'/);
    assert.match(script, /'--units=\[how to measure\]:value:\(metric imperial\)'/);
  });

  it("fish: one complete line per command and option", { skip: !has("fish") && "fish is not installed" }, async () => {
    const script = completionScript(await program(), "fish");
    const dir = await tempDir();
    try {
      const file = join(dir.path, "bub.fish");
      await writeFile(file, script);
      execFileSync("fish", ["--no-execute", file]);
    } finally {
      await dir.cleanup();
    }
    const completed = execFileSync("fish", ["-c", `${script}\ncomplete -C 'bub weather --units '`], { encoding: "utf8" });
    assert.deepEqual(completed.trim().split("\n").map((line) => line.split("\t")[0]), ["imperial", "metric"]);
  });

  it("fish and zsh scripts name every command", async () => {
    const app = await program();
    for (const shell of ["zsh", "fish"]) {
      const script = completionScript(app, shell);
      for (const name of ["run", "chat", "gateway", "weather", "completion"]) assert.ok(script.includes(name), `${shell}: ${name}`);
    }
    assert.throws(() => completionScript(app, "ksh"), /bash, zsh or fish/);
  });
});
