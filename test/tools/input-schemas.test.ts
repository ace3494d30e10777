import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { builtinTools } from "../../src/tools/builtin/index.ts";
import { BUILTIN_INPUT_SCHEMAS } from "../../src/tools/builtin/input-schemas.generated.ts";
import { toolInputSchema } from "../../src/tools/tool.ts";
import { scheduleTools } from "../../src/schedule/tools.ts";
// @ts-expect-error -- a plain ESM build script without type declarations
import { renderInputSchemas } from "../../scripts/gen-tool-schemas.mjs";

describe("generated builtin tool schemas", () => {
  it("match what the zod schemas convert to (run `npm run gen:tool-schemas` if not)", async () => {
    const generated = new URL("../../src/tools/builtin/input-schemas.generated.ts", import.meta.url);
    assert.equal(readFileSync(generated, "utf8"), await renderInputSchemas(), "input-schemas.generated.ts is stale: run `npm run gen:tool-schemas`");
  });

  it("are what every builtin tool reports, without converting its zod schema", () => {
    // The schedule tools are registered per framework but take their schemas from the same file.
    const tools = [...builtinTools(), ...scheduleTools({ home: "" })];
    assert.deepEqual(new Set(tools.map((tool) => tool.name)), new Set(Object.keys(BUILTIN_INPUT_SCHEMAS)));
    for (const tool of tools) {
      assert.equal(tool.inputSchema, BUILTIN_INPUT_SCHEMAS[tool.name], tool.name);
      assert.deepEqual(tool.inputSchema, toolInputSchema(tool.parameters), tool.name);
    }
  });
});
