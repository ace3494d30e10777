// Skill bodies and the skills prompt: config and $SKILL_DIR substitution, $name expansion,
// allowed-skills filtering, and the skill tool.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { clearSkillCache, discoverSkills } from "../../src/skills/discovery.ts";
import { buildSkillsPrompt } from "../../src/skills/prompt.ts";
import { renderConfigTemplates, renderSkillBody, renderSkillsPrompt, skillHints } from "../../src/skills/render.ts";
import { skillTools } from "../../src/tools/builtin/skill.ts";
import { tempDir } from "../support/temp.ts";
import { call, fakeAgent, toolContext } from "../tools/support/tool-context.ts";

describe("skill rendering", () => {
  let temp: { path: string; cleanup: () => Promise<void> };
  let workspace: string;
  const options = () => ({ homeDir: null, bundledDir: null });

  before(async () => {
    temp = await tempDir("bub-render-");
    workspace = temp.path;
    clearSkillCache();
    const root = join(workspace, ".agents/skills");
    for (const [name, body] of [
      ["deploy", "Run `$SKILL_DIR/run.sh` or ${SKILL_DIR}/x with ${ config.deploy.target } and ${config.missing.key}.\nKeep $HOME, $$ and $OTHER; node: $NODE"],
      ["telegram", "Token: ${config.telegram.token}"],
      ["notes", "Notes body"],
    ] as const) {
      mkdirSync(join(root, name), { recursive: true });
      writeFileSync(join(root, name, "SKILL.md"), `---\nname: ${name}\ndescription: The ${name} skill\n---\n\n${body}\n`);
    }
  });
  after(() => temp.cleanup());

  const config = (path: string): unknown =>
    ({ "deploy.target": "prod", "telegram.token": "123:abc", "flag.on": true, "limits.max": 5, "nested.map": { a: 1, b: [1, 2] } })[path];

  it("substitutes config values (missing → empty), $SKILL_DIR and $NODE, leaving other $ text alone", async () => {
    const skill = (await discoverSkills(workspace, options())).find((candidate) => candidate.name === "deploy")!;
    const dir = join(workspace, ".agents/skills/deploy");
    assert.equal(
      await renderSkillBody(skill, { config }),
      `Run \`${dir}/run.sh\` or ${dir}/x with prod and .\nKeep $HOME, $$ and $OTHER; node: ${process.execPath}`,
    );
  });

  it("renders booleans, numbers and structures from the config", () => {
    assert.equal(renderConfigTemplates("${config.flag.on} ${config.limits.max}", config), "true 5");
    assert.equal(renderConfigTemplates("${config.nested.map}", config), "a: 1\nb:\n  - 1\n  - 2");
    assert.equal(renderConfigTemplates("${config.x}", null), "");
  });

  it("lists skills and expands those the prompt mentions as $name", async () => {
    const skills = await discoverSkills(workspace, options());
    const collapsed = await renderSkillsPrompt(skills);
    assert.equal(collapsed, "<available_skills>\n- deploy: The deploy skill\n- notes: The notes skill\n- telegram: The telegram skill\n</available_skills>");
    assert.deepEqual([...skillHints("channel=$telegram|x please use $Notes, not $ alone")], ["telegram", "notes"]);
    const prompt = await buildSkillsPrompt("context: channel=$telegram\nhello", { workspace, config, ...options() });
    assert.equal(
      prompt,
      "<available_skills>\n- deploy: The deploy skill\n- notes: The notes skill\n" +
        `- telegram: The telegram skill\n  Location: ${join(workspace, ".agents/skills/telegram/SKILL.md")}\nToken: [redacted:telegram.token]\n</available_skills>`,
    );
    assert.equal(await renderSkillsPrompt([]), "");
  });

  it("renders a block once per skills array and mentions, except bodies that use the config", async () => {
    // Discovery answers the same frozen array while the skills do not change; a mutable one
    // shows that the block is kept against the array, not rendered again.
    const notes: { name: string; description: string; location: string; source: "project"; metadata: Record<string, unknown>; content: string } = {
      name: "notes",
      description: "Notes",
      location: join(workspace, "notes/SKILL.md"),
      source: "project",
      metadata: {},
      content: "Body one",
    };
    const list = [notes];
    assert.match(await renderSkillsPrompt(list, { expanded: ["notes"] }), /Body one/);
    notes.content = "Body two";
    assert.match(await renderSkillsPrompt(list, { expanded: ["notes"] }), /Body one/, "the same array and mentions: the kept block");
    assert.match(await renderSkillsPrompt([notes], { expanded: ["notes"] }), /Body two/, "another array is rendered");
    assert.doesNotMatch(await renderSkillsPrompt(list, { expanded: [] }), /Body/, "other mentions are another block");
    assert.doesNotMatch(await renderSkillsPrompt(list, { expanded: ["notes"], maxBytes: 4 }), /Body one/, "another limit is another block");
    // A body with a config template is rendered at every call: the setting may have changed.
    const skills = await discoverSkills(workspace, options());
    const deployWith = (target: string) => renderSkillsPrompt(skills, { expanded: ["deploy"], config: (path) => (path === "deploy.target" ? target : undefined) });
    assert.match(await deployWith("prod"), /with prod and/);
    assert.match(await deployWith("staging"), /with staging and/);
  });

  it("shows only allowed skills", async () => {
    const prompt = await buildSkillsPrompt("$deploy", { workspace, allowedSkills: ["NOTES"], ...options() });
    assert.equal(prompt, "<available_skills>\n- notes: The notes skill\n</available_skills>");
    assert.equal(await buildSkillsPrompt("", { workspace, allowedSkills: [], ...options() }), "");
  });

  describe("skill tool", () => {
    const tools = skillTools({ homeDir: null, bundledDir: null });

    it("lists the skills and loads one with its location and rendered body", async () => {
      const state = {};
      const options = { workspace, agent: fakeAgent({ config: { telegram: { token: "T0K" } } }) };
      assert.equal(await call(tools, "skill", {}, toolContext(state, options)), "Available skills:\n- deploy\n- notes\n- telegram");
      assert.equal(await call(tools, "skill", { name: "Telegram" }, toolContext(state, options)), `Location: ${join(workspace, ".agents/skills/telegram/SKILL.md")}\n---\nToken: [redacted:telegram.token]`);
      assert.equal(await call(tools, "skill", { name: "nope" }, toolContext(state, options)), "(no such skill)");
    });

    it("honours the turn's allowed skills", async () => {
      const state = { allowed_skills: ["notes"] };
      assert.equal(await call(tools, "skill", { name: "deploy" }, toolContext(state, { workspace })), "(skill 'deploy' is not allowed in this context)");
      assert.equal(await call(tools, "skill", {}, toolContext(state, { workspace })), "Available skills:\n- notes");
      assert.match(String(await call(tools, "skill", { name: "notes" }, toolContext(state, { workspace }))), /---\nNotes body$/);
    });
  });
});
