import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import { defineTool, registerTool, toolsOf } from "../../src/tools/index.ts";
import { createTestBub, scriptedModel } from "../../src/testing.ts";
import { definePlugin } from "../../src/kernel/hooks.ts";
import { tempDir } from "../support/temp.ts";

describe("createBub", () => {
  it("reads config.yml, registers the builtin plugin first and the listed plugins after it", async () => {
    const dir = await tempDir();
    try {
      const plugin = join(dir.path, "shout.mjs");
      await writeFile(plugin, 'export default { name: "shout", systemPrompt: () => "SHOUT" };\n');
      await writeFile(join(dir.path, "config.yml"), `model: a:b\nplugins:\n  - ${plugin}\n`);
      const bub = await createBub({ workspace: dir.path, home: dir.path, env: {} });
      assert.deepEqual(bub.pluginStatus.map((status) => [status.name, status.source, status.ok]), [["builtin", "builtin", true], ["shout", "config", true]]);
      await bub.settings.prepare();
      assert.equal(bub.settings.getValue("model"), "a:b");
      assert.equal(bub.settings.file.path, join(dir.path, "config.yml"));
    } finally {
      await dir.cleanup();
    }
  });

  it("gives two frameworks in one process their own tools", async () => {
    const [first, second] = await Promise.all([createBub({ home: "/nonexistent-bub-home", env: {} }), createBub({ home: "/nonexistent-bub-home", env: {} })]);
    const dispose = registerTool(first, defineTool({ name: "only.first", run: () => "mine" }));
    assert.equal(toolsOf(first).has("only.first"), true);
    assert.equal(toolsOf(second).has("only.first"), false);
    assert.equal(toolsOf(second).has("bash"), true);
    dispose();
    assert.equal(toolsOf(first).has("only.first"), false);
  });
});

describe("bub-ts/testing", () => {
  it("runs a turn through the given plugins and a scripted model, reading no config file", async () => {
    const model = scriptedModel(["first answer", "second answer"]);
    const prefix = definePlugin({ name: "prefix", buildPrompt: ({ message }) => `> ${String((message as { content: string }).content)}` });
    const bub = await createTestBub({ plugins: [prefix, model], env: { BUB_MODEL: "x:y" } });
    const one = await bub.processInbound({ channel: "test", chat_id: "1", content: "hi" });
    const two = await bub.processInbound({ channel: "test", chat_id: "1", content: "again" });
    const three = await bub.processInbound({ channel: "test", chat_id: "1", content: "more" });
    assert.deepEqual([one.modelOutput, two.modelOutput, three.modelOutput], ["first answer", "second answer", "second answer"]);
    assert.deepEqual(model.prompts, ["> hi", "> again", "> more"]);
    assert.deepEqual(bub.pluginStatus.map((status) => status.name), ["prefix", "scripted-model"]);
  });

  it("registers the builtin plugin first when asked", async () => {
    const bub = await createTestBub({ builtin: true, plugins: [scriptedModel(() => "ok")] });
    assert.equal(bub.pluginStatus[0]?.name, "builtin");
    const result = await bub.processInbound({ channel: "test", chat_id: "1", content: "hello" });
    assert.equal(result.modelOutput, "ok");
  });
});
