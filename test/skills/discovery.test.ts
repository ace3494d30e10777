// Skill discovery: precedence of project, legacy, global and bundled roots, validation
// warnings that name the file and the problem, and the bundled skills themselves.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { bundledSkillsDir, clearSkillCache, discoverSkills } from "../../src/skills/discovery.ts";
import { frontmatterProblem, parseFrontmatter, stripFrontmatter } from "../../src/skills/frontmatter.ts";
import { captureLogs, tempDir } from "../support/temp.ts";

function writeSkill(root: string, dir: string, frontmatter: string, body = "Body text."): string {
  mkdirSync(join(root, dir), { recursive: true });
  const file = join(root, dir, "SKILL.md");
  writeFileSync(file, `${frontmatter}\n${body}\n`);
  return file;
}

const valid = (name: string, description = `${name} skill`) => `---\nname: ${name}\ndescription: ${description}\n---`;

describe("skill discovery", () => {
  let temp: { path: string; cleanup: () => Promise<void> };
  let workspace: string;
  let home: string;
  let bundled: string;
  let counter = 0;

  before(async () => {
    temp = await tempDir("bub-skills-");
  });
  after(() => temp.cleanup());
  beforeEach(() => {
    counter++;
    workspace = join(temp.path, `ws${counter}`);
    home = join(temp.path, `home${counter}`);
    bundled = join(temp.path, `bundled${counter}`);
    mkdirSync(workspace, { recursive: true });
    clearSkillCache();
  });

  const discover = () => discoverSkills(workspace, { homeDir: home, bundledDir: bundled });

  it("prefers project over global over bundled skills of the same name, sorted by name", () => {
    writeSkill(bundled, "shared", valid("shared", "from bundled"));
    writeSkill(bundled, "zeta", valid("zeta"));
    writeSkill(join(home, ".agents/skills"), "shared", valid("shared", "from global"));
    writeSkill(join(home, ".agents/skills"), "alpha", valid("alpha"));
    const projectFile = writeSkill(join(workspace, ".agents/skills"), "shared", valid("shared", "from project"));
    const skills = discover();
    assert.deepEqual(skills.map((skill) => [skill.name, skill.source]), [["alpha", "global"], ["shared", "project"], ["zeta", "builtin"]]);
    assert.equal(skills[1]!.description, "from project");
    assert.equal(skills[1]!.location, projectFile);
  });

  it("reads the legacy .agent/skills folder with a deprecation warning", async () => {
    writeSkill(join(workspace, ".agent/skills"), "old", valid("old"));
    const { result, logs } = await captureLogs(() => discover());
    assert.deepEqual(result.map((skill) => [skill.name, skill.source]), [["old", "project"]]);
    assert.ok(logs.some((log) => log.level === "warn" && log.message.includes(join(workspace, ".agent/skills")) && log.message.includes("deprecated")));
  });

  it("skips invalid skills with a warning naming the file and the problem", async () => {
    const root = join(workspace, ".agents/skills");
    const cases: [string, string, RegExp][] = [
      ["no-front", "Just text", /no frontmatter: the file must start with a '---' line/],
      ["unclosed", "---\nname: unclosed\ndescription: x", /frontmatter is not closed/],
      ["bad-yaml", "---\nname: x\ndescription: it's: bad\n---", /problem=frontmatter is not valid YAML: line 3, column 14: nested mappings are not allowed in compact mappings \(quote a value that contains ': '/],
      ["list-yaml", "---\n- a\n- b\n---", /frontmatter is not a YAML mapping/],
      ["wrong-dir", valid("other-name"), /'name' "other-name" does not match its directory name "wrong-dir"/],
      ["Upper", valid("Upper"), /'name' "Upper" must be lowercase letters and digits joined by single hyphens/],
      ["no-name", "---\ndescription: d\n---", /'name' is missing/],
      ["no-description", "---\nname: no-description\n---", /'description' is missing/],
      ["long-description", valid("long-description", "x".repeat(1025)), /'description' is longer than 1024 characters \(1025\)/],
      ["bad-metadata", `${valid("bad-metadata").slice(0, -4)}\nmetadata:\n  version: 2\n---`, /'metadata.version' must be a string/],
      ["list-metadata", `${valid("list-metadata").slice(0, -4)}\nmetadata: [a]\n---`, /'metadata' must be a mapping of strings to strings/],
    ];
    const files = cases.map(([dir, frontmatter]) => writeSkill(root, dir, frontmatter));
    writeSkill(root, "good", valid("good"));
    mkdirSync(join(root, "not-a-skill"));
    const { result, logs } = await captureLogs(() => discover());
    assert.deepEqual(result.map((skill) => skill.name), ["good"]);
    cases.forEach(([, , problem], index) => {
      const warning = logs.find((log) => log.level === "warn" && log.message.includes(`path=${files[index]} `));
      assert.ok(warning, `a warning for ${files[index]}`);
      assert.match(warning.message, problem);
    });
    assert.equal(logs.filter((log) => log.level === "warn").length, cases.length, "one warning per invalid skill, none for a folder without SKILL.md");
    const again = await captureLogs(() => discover());
    assert.equal(again.logs.length, 0, "unchanged files are not parsed (or warned about) again");
  });

  it("sees a changed SKILL.md on the next discovery", () => {
    const file = writeSkill(join(workspace, ".agents/skills"), "live", valid("live", "first"));
    assert.equal(discover()[0]!.description, "first");
    writeFileSync(file, `${valid("live", "second version")}\nBody\n`);
    assert.equal(discover()[0]!.description, "second version");
  });

  it("keeps lowercased frontmatter keys as metadata", () => {
    writeSkill(join(workspace, ".agents/skills"), "meta", "---\nName: meta\nDescription: d\nmetadata:\n  channel: telegram\n---");
    const [skill] = discover();
    assert.deepEqual(skill!.metadata, { name: "meta", description: "d", metadata: { channel: "telegram" } });
  });

  it("finds the bundled skills next to the package", () => {
    const skills = discoverSkills(workspace, { homeDir: null });
    assert.equal(bundledSkillsDir(), join(import.meta.dirname, "..", "..", "skills"));
    const telegram = skills.find((skill) => skill.name === "telegram");
    assert.equal(telegram?.source, "builtin");
    assert.deepEqual(telegram?.metadata.metadata, { channel: "telegram" });
    assert.ok(skills.some((skill) => skill.name === "skill-creator"));
  });
});

describe("frontmatter", () => {
  it("parses and validates", () => {
    const parsed = parseFrontmatter("\n---\nname: a-b\ndescription: ok\n---\nbody");
    assert.deepEqual(parsed, { ok: true, data: { name: "a-b", description: "ok" } });
    assert.equal(frontmatterProblem("a-b", { name: "a-b", description: "ok", metadata: null }), null);
    assert.equal(frontmatterProblem("a--b", { name: "a--b", description: "ok" }), `'name' "a--b" must be lowercase letters and digits joined by single hyphens`);
    assert.equal(frontmatterProblem("x", { name: "x".repeat(65), description: "ok" }), "'name' is longer than 64 characters");
  });

  it("reports malformed YAML with the line and column in the file, counting the lines before it", () => {
    const parsed = parseFrontmatter("\n\n---\nname: a\n\tdescription: b\n---\nbody");
    assert.deepEqual(parsed, { ok: false, problem: "frontmatter is not valid YAML: line 5, column 1: tabs are not allowed as indentation (indent with spaces, not tabs)" });
    assert.deepEqual(parseFrontmatter("---\nname: a\ndescription: |\n  two\n  lines\nmetadata:\n  n: '1'\n---"), {
      ok: true,
      data: { name: "a", description: "two\nlines\n", metadata: { n: "1" } },
    });
  });

  it("strips only the first frontmatter block", () => {
    assert.equal(stripFrontmatter("---\nname: a\n---\n\nBody\n---\nmore\n"), "Body\n---\nmore");
    assert.equal(stripFrontmatter("no frontmatter"), "no frontmatter");
  });
});
