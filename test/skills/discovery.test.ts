// Skill discovery: precedence of project, legacy, global and bundled roots, validation
// warnings that name the file and the problem, and the bundled skills themselves.
import assert from "node:assert/strict";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { bundledSkillsDir, clearSkillCache, discoverSkills } from "../../src/skills/discovery.ts";
import { frontmatterProblem, parseFrontmatter, stripFrontmatter } from "../../src/skills/frontmatter.ts";
import { captureLogs, tempDir } from "../support/temp.ts";
import { buildSkillsPrompt } from "../../src/skills/prompt.ts";
import { renderSkillBody } from "../../src/skills/render.ts";
import { skillTools } from "../../src/tools/builtin/skill.ts";
import { call, fakeAgent, toolContext } from "../tools/support/tool-context.ts";

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

  // maxAgeMs 0: every call reads the disk (the result cache has its own tests in discovery-cache.test.ts).
  const discover = () => discoverSkills(workspace, { homeDir: home, bundledDir: bundled, maxAgeMs: 0 });

  it("prefers project over global over bundled skills of the same name, sorted by name", async () => {
    writeSkill(bundled, "shared", valid("shared", "from bundled"));
    writeSkill(bundled, "zeta", valid("zeta"));
    writeSkill(join(home, ".agents/skills"), "shared", valid("shared", "from global"));
    writeSkill(join(home, ".agents/skills"), "alpha", valid("alpha"));
    const projectFile = writeSkill(join(workspace, ".agents/skills"), "shared", valid("shared", "from project"));
    const skills = await discover();
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

  it("skips a SKILL.md over the size limit with one warning naming the file and its size, and never renders its body", async () => {
    const root = join(workspace, ".agents/skills");
    const big = writeSkill(root, "huge", valid("huge", "a huge skill"), "x".repeat(20 * 1024 * 1024));
    writeSkill(root, "small", valid("small"));
    const first = await captureLogs(() => buildSkillsPrompt("use $huge and $small", { workspace, homeDir: home, bundledDir: bundled, maxAgeMs: 0 }));
    assert.doesNotMatch(first.result, /huge|xxxx/, "neither listed nor expanded");
    assert.match(first.result, /- small: small skill\n {2}Location: .*\nBody text\./);
    assert.deepEqual(first.logs.map((log) => log.message), [
      `skill.too_large path=${big} problem=SKILL.md is ${statSync(big).size.toLocaleString("en-US")} bytes, more than 262,144 (BUB_SKILL_MAX_BYTES): the skill is skipped and its body never sent`,
    ]);
    const again = await captureLogs(() => discover());
    assert.deepEqual(again.result.map((skill) => skill.name), ["small"]);
    assert.equal(again.logs.length, 0, "warned once per change of the file");
    // The limit is a setting: a larger one takes the skill.
    assert.deepEqual((await discoverSkills(workspace, { homeDir: home, bundledDir: bundled, maxBytes: 32 * 1024 * 1024 })).map((skill) => skill.name), ["huge", "small"]);
    const tiny = await captureLogs(() => discoverSkills(workspace, { homeDir: home, bundledDir: bundled, maxBytes: 20 }));
    assert.deepEqual(tiny.result, []);
    assert.equal(tiny.logs.length, 2);
  });

  it("does not load a body that grew past the limit after discovery when it reads it again, in the prompt or the skill tool", async () => {
    const file = writeSkill(join(workspace, ".agents/skills"), "grows", valid("grows"));
    const [skill] = await discover();
    writeFileSync(file, `${valid("grows")}\n${"y".repeat(300 * 1024)}\n`);
    const line = `(${file} is larger than 262144 bytes, the limit BUB_SKILL_MAX_BYTES sets: its instructions are not loaded)`;
    assert.doesNotMatch(await renderSkillBody(skill!), /y{100}/, "the discovered skill renders the body discovery read, without reading again");
    assert.ok(!Object.keys(skill!).includes("content"), "the text is not listed with the skill");
    const reread = { location: skill!.location };
    assert.equal(await renderSkillBody(reread), line);
    assert.equal((await renderSkillBody(reread, { maxBytes: 1024 * 1024 })).length, 300 * 1024);
    const [tool] = skillTools({ homeDir: home, bundledDir: bundled });
    const agent = fakeAgent({ config: { skill_max_bytes: 100 } });
    const state = {};
    const listed = await captureLogs(() => call([tool!], "skill", {}, toolContext(state, { workspace, agent })));
    assert.equal(listed.result, "Available skills:\n(none)", "BUB_SKILL_MAX_BYTES=100 leaves it out");
    assert.ok(listed.logs[0]!.message.startsWith(`skill.too_large path=${file} problem=SKILL.md is ${statSync(file).size.toLocaleString("en-US")} bytes, more than 100 (BUB_SKILL_MAX_BYTES)`));
  });

  it("sees a changed SKILL.md on the next discovery", async () => {
    const file = writeSkill(join(workspace, ".agents/skills"), "live", valid("live", "first"));
    assert.equal((await discover())[0]!.description, "first");
    writeFileSync(file, `${valid("live", "second version")}\nBody\n`);
    assert.equal((await discover())[0]!.description, "second version");
  });

  it("keeps lowercased frontmatter keys as metadata", async () => {
    writeSkill(join(workspace, ".agents/skills"), "meta", "---\nName: meta\nDescription: d\nmetadata:\n  channel: telegram\n---");
    const [skill] = await discover();
    assert.deepEqual(skill!.metadata, { name: "meta", description: "d", metadata: { channel: "telegram" } });
  });

  it("finds the bundled skills next to the package", async () => {
    const skills = await discoverSkills(workspace, { homeDir: null });
    assert.equal(bundledSkillsDir(), join(import.meta.dirname, "..", "..", "skills"));
    const telegram = skills.find((skill) => skill.name === "telegram");
    assert.equal(telegram?.source, "builtin");
    assert.deepEqual(telegram?.metadata.metadata, { channel: "telegram" });
    assert.ok(skills.some((skill) => skill.name === "skill-creator"));
    const gh = skills.find((skill) => skill.name === "gh");
    assert.equal(gh?.source, "builtin", "the reference's gh skill is bundled too");
    assert.match(gh!.description, /GitHub/);
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
