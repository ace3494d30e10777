import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { parseSimpleYaml } from "../../src/skills/simple-yaml.ts";

// Every sample either parses to exactly what the full YAML parser gives, or is declined
// (undefined) so the caller falls back to it.
const HANDLED = [
  "name: a\ndescription: b",
  "name: skill-creator\ndescription: How to write a good Agent Skill for Bub (a folder with a SKILL.md), with a script.\nmetadata:\n  short-description: Create, update and validate skills",
  "name: telegram\ndescription: |\n  Line one,\n  line two.\n\n  After a blank line.\nmetadata:\n  channel: telegram",
  "description: |-\n  kept\n  without the last newline\nname: x",
  "description: |+\n  kept\n\n\nname: x",
  "description: |\n  trailing blanks clipped\n\n\n",
  "name: 'it''s quoted'\ndescription: \"double, quoted\"",
  "name: x   \ndescription: trailing spaces   ",
  "name: a:b\ndescription: url http://example.com/x",
  "name: yes\ndescription: on",
  "name: 0x1G\ndescription: NaN",
  "metadata:\n    deep: indent\n    other: value\nname: x",
  "\n\nname: x\n\ndescription: y\n",
];
const DECLINED = [
  "count: 3",
  "flag: true",
  "nothing:",
  "nothing: ~",
  "value: null",
  "float: 1.5e3",
  "name: [a, b]",
  "name: {a: b}",
  "name: &anchor x",
  "name: *ref",
  "name: !tag x",
  "name: x # comment",
  "# comment\nname: x",
  "name: x\nname: y",
  "description: >\n  folded\n  text",
  "description: \"escaped \\n\"",
  "description: 'unterminated",
  "description: plain\n  continued on the next line",
  "- a\n- b",
  "metadata:\n  count: 3",
  "metadata:\n  a: x\n   b: y",
  "metadata:\n  nested:\n    deeper: x",
  "description: |\n\n    more indented blank\n  content",
  "description: |",
  "name: -dash",
  "key with spaces: x",
  "name: x\n...",
  "__proto__: x",
  "description: |\n    more\n  less indented",
  "name: x\r\ndescription: y\r",
];

describe("parseSimpleYaml", () => {
  for (const sample of HANDLED) {
    it(`agrees with the YAML parser on ${JSON.stringify(sample)}`, () => {
      const simple = parseSimpleYaml(sample);
      assert.notEqual(simple, undefined, "expected the fast path to handle this sample");
      assert.deepEqual(simple, parse(sample));
    });
  }
  for (const sample of DECLINED) {
    it(`declines ${JSON.stringify(sample)}`, () => {
      assert.equal(parseSimpleYaml(sample), undefined);
    });
  }
  it("handles the frontmatter of every bundled skill", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const root = new URL("../../skills/", import.meta.url);
    for (const dir of readdirSync(root)) {
      const text = readFileSync(new URL(`${dir}/SKILL.md`, root), "utf8");
      const frontmatter = text.split("\n---")[0]!.replace(/^---\n/, "");
      assert.deepEqual(parseSimpleYaml(frontmatter), parse(frontmatter), dir);
    }
  });
});
