import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseYaml, parseYamlDocument, YamlError } from "../../src/config/yaml.ts";
import { readConfigFile } from "../../src/config/config-file.ts";
import { ConfigError } from "../../src/config/settings.ts";
import { tempDir } from "../support/temp.ts";

function yamlError(text: string, firstLine?: number): YamlError {
  try {
    parseYaml(text, { file: "/x/f.yml", firstLine, fix: "fix it" });
  } catch (error) {
    assert.ok(error instanceof YamlError);
    return error;
  }
  assert.fail("expected a YamlError");
}

describe("parseYaml", () => {
  it("returns the parsed value", () => {
    assert.deepEqual(parseYaml("a: 1\nb: [x, y]\nc:\n  d: true\n", { file: "f.yml" }), { a: 1, b: ["x", "y"], c: { d: true } });
    assert.equal(parseYaml("", { file: "f.yml" }), null);
  });

  it("names the file, line and column, says what is wrong and what to do", () => {
    const error = yamlError("a: 1\nb:\n\tc: 2\n");
    assert.equal(error.message, "/x/f.yml line 3, column 1: tabs are not allowed as indentation (indent with spaces, not tabs) — fix it");
    assert.deepEqual([error.file, error.line, error.column, error.kind], ["/x/f.yml", 3, 1, "config"]);
    assert.match(yamlError("a: 1\na: 2\n").message, /^\/x\/f\.yml line 2, column 1: map keys must be unique \(remove or rename the repeated key\) — fix it$/);
    assert.match(yamlError("a: b: c\n").message, /line 1, column 4: nested mappings are not allowed in compact mappings \(quote a value/);
    assert.match(yamlError("a: 'open\n").message, /line 2, column 1: missing closing 'quote/);
    assert.match(yamlError("a: *nowhere\n").message, /^\/x\/f\.yml line 1, column 4: the alias \*nowhere has no anchor &nowhere before it/);
    assert.doesNotMatch(yamlError("a: [1\n").message, /\n/, "one line");
  });

  it("counts lines from where embedded YAML starts", () => {
    assert.equal(yamlError("ok: 1\nbad: [\n", 10).line, 12);
  });

  it("finds the line of a key path", () => {
    const parsed = parseYamlDocument("# comment\nmodel: x\nspill:\n  threshold: 3\n", { file: "f.yml", firstLine: 5 });
    assert.equal(parsed.lineOf(["model"]), 6);
    assert.equal(parsed.lineOf(["spill", "threshold"]), 8);
    assert.equal(parsed.lineOf(["spill", "missing"]), 7);
    assert.equal(parsed.lineOf(["missing"]), null);
  });
});

describe("readConfigFile", () => {
  async function withFile(text: string, body: (path: string) => Promise<void>): Promise<void> {
    const dir = await tempDir();
    try {
      const path = join(dir.path, "config.yml");
      await writeFile(path, text);
      await body(path);
    } finally {
      await dir.cleanup();
    }
  }

  it("reads a mapping, and treats a missing or empty file as empty", async () => {
    await withFile("model: a:b\n", async (path) => assert.deepEqual((await readConfigFile(path)).data, { model: "a:b" }));
    await withFile("# nothing\n", async (path) => assert.deepEqual((await readConfigFile(path)).data, {}));
    assert.deepEqual((await readConfigFile("/nonexistent/bub/config.yml")).data, {});
  });

  it("reports malformed YAML as one line: file, line, column, problem, and the fix", async () => {
    await withFile("model: a:b\nspill:\n  threshold: [1, 2\n", async (path) => {
      await assert.rejects(readConfigFile(path), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^\S+config\.yml line 4, column 1: flow sequence in block collection must be sufficiently indented and end with a \] \(close the bracket and check the indentation\) — fix the file or run bub onboard$/);
        assert.equal(error.message.startsWith(path), true);
        return true;
      });
    });
  });

  it("rejects a top level that is not a mapping", async () => {
    await withFile("- a\n- b\n", async (path) => {
      await assert.rejects(readConfigFile(path), (error: Error) => error.message === `${path} line 1, column 1: the file must be a YAML mapping of settings (key: value), not a list — fix the file or run bub onboard`);
    });
  });
});
