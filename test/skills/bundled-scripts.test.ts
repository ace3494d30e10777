// The bundled skills' Node scripts: the skill-creator's scaffold and validate commands. (The
// telegram skill has no scripts: it uses the telegram.send/telegram.edit tools.)
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tempDir } from "../support/temp.ts";

const SKILLS = join(import.meta.dirname, "..", "..", "skills");

function runScript(script: string, args: string[], options: { stdin?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    // A script that exits before reading its stdin closes the pipe: EPIPE then is no failure.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin ?? "");
  });
}

describe("skill-creator script", () => {
  const tool = join(SKILLS, "skill-creator/scripts/skill-tool.mjs");

  it("scaffolds a skill that validates, and refuses to overwrite it", async () => {
    const dir = await tempDir("bub-creator-");
    try {
      const created = await runScript(tool, ["init", "release-notes", "--description", "Write release notes. Use when asked."], { cwd: dir.path });
      assert.equal(created.code, 0, created.stderr);
      const file = join(dir.path, ".agents/skills/release-notes/SKILL.md");
      assert.equal(created.stdout, `created ${file}\n`);
      assert.match(readFileSync(file, "utf8"), /^---\nname: release-notes\ndescription: "Write release notes. Use when asked."\n---\n/);
      assert.equal((await runScript(tool, ["validate", ".agents/skills/release-notes"], { cwd: dir.path })).code, 0);
      const again = await runScript(tool, ["init", "release-notes"], { cwd: dir.path });
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already exists/);
    } finally {
      await dir.cleanup();
    }
  });

  it("lists every problem of an invalid skill", async () => {
    const dir = await tempDir("bub-creator-");
    try {
      mkdirSync(join(dir.path, "my-skill"));
      writeFileSync(join(dir.path, "my-skill", "SKILL.md"), "---\nname: other\nmetadata:\n  v: 1\n---\n");
      const result = await runScript(tool, ["validate", join(dir.path, "my-skill")]);
      assert.equal(result.code, 1);
      const file = join(dir.path, "my-skill", "SKILL.md");
      assert.deepEqual(result.stderr.trim().split("\n"), [
        `${file}: 'name' "other" does not match its directory name "my-skill"`,
        `${file}: 'description' is missing, empty or not a string`,
        `${file}: 'metadata.v' must be a string (quote it in the YAML)`,
        `${file}: the body is empty: write the instructions after the frontmatter`,
      ]);
    } finally {
      await dir.cleanup();
    }
  });

  it("validates the bundled skills", async () => {
    for (const name of ["telegram", "skill-creator", "gh"]) {
      const result = await runScript(tool, ["validate", join(SKILLS, name)]);
      assert.equal(result.code, 0, result.stderr);
    }
  });
});
