// Skill discovery's result cache: a discovery of the same roots within maxAgeMs (default one
// second) reuses the last result without touching the disk, concurrent discoveries share one
// scan, and no synchronous file system call is made on the way.
import assert from "node:assert/strict";
import fs, { mkdirSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { after, before, beforeEach, describe, it, type TestContext } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { clearSkillCache, discoverSkills, type SkillDiscoveryOptions } from "../../src/skills/discovery.ts";
import { buildSkillsPrompt } from "../../src/skills/prompt.ts";
import { renderSkillBody } from "../../src/skills/render.ts";
import { tempDir } from "../support/temp.ts";

function writeSkill(root: string, name: string): string {
  mkdirSync(join(root, name), { recursive: true });
  const file = join(root, name, "SKILL.md");
  writeFileSync(file, `---\nname: ${name}\ndescription: The ${name} skill\n---\nBody of ${name}.\n`);
  return file;
}

describe("skill discovery cache", () => {
  let temp: { path: string; cleanup: () => Promise<void> };
  let workspace: string;
  let skillsRoot: string;
  let counter = 0;
  const options = (extra: SkillDiscoveryOptions = {}): SkillDiscoveryOptions => ({ homeDir: null, bundledDir: null, ...extra });
  const names = (skills: readonly { name: string }[]) => skills.map((skill) => skill.name);

  before(async () => {
    temp = await tempDir("bub-skill-cache-");
  });
  after(() => temp.cleanup());
  beforeEach(() => {
    counter++;
    workspace = join(temp.path, `ws${counter}`);
    skillsRoot = join(workspace, ".agents/skills");
    mkdirSync(workspace, { recursive: true });
    writeSkill(skillsRoot, "first");
    clearSkillCache();
  });

  it("returns the previous result within maxAgeMs, and reads the disk again with maxAgeMs 0", async () => {
    const before = await discoverSkills(workspace, options());
    assert.deepEqual(names(before), ["first"]);
    assert.ok(Object.isFrozen(before), "the shared result cannot be changed by a caller");
    writeSkill(skillsRoot, "second");
    const cached = await discoverSkills(workspace, options());
    assert.equal(cached, before, "within a second: the same result, the new skill not seen yet");
    const fresh = await discoverSkills(workspace, options({ maxAgeMs: 0 }));
    assert.deepEqual(names(fresh), ["first", "second"]);
    assert.equal(await discoverSkills(workspace, options()), fresh, "a fresh scan becomes the cached result");
  });

  it("sees an added, edited or removed skill once the result is older than maxAgeMs", async () => {
    assert.deepEqual(names(await discoverSkills(workspace, options({ maxAgeMs: 40 }))), ["first"]);
    writeSkill(skillsRoot, "second");
    assert.deepEqual(names(await discoverSkills(workspace, options({ maxAgeMs: 40 }))), ["first"]);
    await sleep(60);
    assert.deepEqual(names(await discoverSkills(workspace, options({ maxAgeMs: 40 }))), ["first", "second"]);
    fs.rmSync(join(skillsRoot, "first"), { recursive: true });
    await sleep(60);
    assert.deepEqual(names(await discoverSkills(workspace, options({ maxAgeMs: 40 }))), ["second"]);
  });

  it("answers the array it replaces when a later scan finds the same skills", async () => {
    const first = await discoverSkills(workspace, options());
    assert.equal(await discoverSkills(workspace, options({ maxAgeMs: 0 })), first, "nothing changed on the disk: the same array");
    writeFileSync(join(skillsRoot, "first", "SKILL.md"), "---\nname: first\ndescription: The first skill, edited\n---\nNew body.\n");
    const edited = await discoverSkills(workspace, options({ maxAgeMs: 0 }));
    assert.notEqual(edited, first, "an edited skill makes a new result");
    assert.equal(edited[0].description, "The first skill, edited");
  });

  it("shares one scan between concurrent discoveries of the same roots", async () => {
    const [a, b] = await Promise.all([discoverSkills(workspace, options()), discoverSkills(workspace, options())]);
    assert.equal(a, b, "both callers get the one scan's array");
    const [c, d] = await Promise.all([discoverSkills(workspace, options({ maxBytes: 1024 })), discoverSkills(workspace, options())]);
    assert.notEqual(c, d, "another limit is another key");
    assert.equal(d, a);
    clearSkillCache();
    assert.notEqual(await discoverSkills(workspace, options()), a, "clearSkillCache forgets results");
  });

  it("keeps a bounded number of results, forgetting the oldest", async () => {
    const first = await discoverSkills(workspace, options());
    for (let index = 0; index < 40; index++) await discoverSkills(join(temp.path, `other${index}`), options());
    const again = await discoverSkills(workspace, options());
    assert.notEqual(again, first, "the first key was dropped, so it is scanned again");
    assert.deepEqual(names(again), ["first"]);
  });

  it("makes no synchronous file system call", async (t: TestContext) => {
    const file = writeSkill(skillsRoot, "second");
    const forbidden = ["statSync", "lstatSync", "readdirSync", "openSync", "readSync", "readFileSync", "existsSync", "closeSync"] as const;
    for (const name of forbidden) {
      t.mock.method(fs, name, () => {
        throw new Error(`fs.${name} called during skill discovery`);
      });
    }
    // Named imports of node:fs (`import { statSync } from "node:fs"`) see the mocks too.
    syncBuiltinESMExports();
    try {
      assert.throws(() => fs.statSync(file), /fs.statSync called/, "the mock intercepts");
      assert.deepEqual(names(await discoverSkills(workspace, options())), ["first", "second"]);
      assert.match(await buildSkillsPrompt("use $second", { workspace, ...options({ maxAgeMs: 0 }) }), /Body of second\./);
      assert.equal(await renderSkillBody({ location: file }), "Body of second.");
    } finally {
      t.mock.restoreAll();
      syncBuiltinESMExports();
    }
  });
});
