import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { printPlugins } from "../../src/builtin/commands/plugins.ts";
import { defineTool, registerTool } from "../../src/tools/index.ts";
import { toolsByPlugin } from "../../src/tools/global.ts";
import { definePlugin } from "../../src/kernel/hooks.ts";
import { kernelFramework } from "../support/framework.ts";

describe("bub plugins --tools", () => {
  it("lists each plugin's tools under the name it registered as, the builtin's first", async () => {
    const bub = kernelFramework();
    await bub.registerPlugin((framework) => {
      registerTool(framework, defineTool({ name: "dice.roll", run: () => "4" }));
      registerTool(framework, defineTool({ name: "dice.flip", run: () => "heads" }));
      return definePlugin({ name: "dice" });
    }, null, { fallbackName: "index" });
    registerTool(bub, defineTool({ name: "late.tool", run: () => "" }));
    const grouped = toolsByPlugin(bub);
    assert.deepEqual(grouped.get("dice"), ["dice.roll", "dice.flip"]);
    assert.deepEqual(grouped.get("(unknown)"), ["late.tool"]);
    assert.ok(grouped.get("builtin")?.includes("bash"));
    assert.equal(grouped.has("index"), false, "the provisional name is replaced by the plugin's own");

    let text = "";
    await printPlugins(bub, { write: (chunk: string) => (text += chunk) }, { tools: true });
    assert.match(text, /\nTools:\n  builtin: .*\bbash\b.*\n  dice: dice\.roll, dice\.flip\n  \(unknown\): late\.tool\n\nHooks:\n/);
  });
});
