import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { BubError } from "../../src/kernel/errors.ts";
import { createToolRegistry } from "../../src/tools/registry.ts";
import {
  defineTool,
  renameTool,
  renderToolsPrompt,
  toModelToolName,
  toModelTools,
  toolSchema,
  type Tool,
  type ToolContext,
  type ToolRunOptions,
} from "../../src/tools/tool.ts";

const read = defineTool({
  name: "fs.read",
  description: "Read a file",
  parameters: z.object({ path: z.string(), offset: z.number().int().default(0), limit: z.number().int().nullable().optional() }),
  context: true,
  run: ({ path }, { runId }) => `${runId}:${path}`,
});
const help = defineTool({ name: "help", description: "Show help", agentUse: false, run: () => "help text" });
const info = defineTool({ name: "tape.info", run: () => "info" });

describe("defineTool", () => {
  it("infers argument and context types (compile-time checks)", () => {
    const typed = defineTool({
      name: "typed",
      parameters: z.object({ a: z.string(), n: z.number().optional() }),
      run: (args, options) => {
        const a: string = args.a;
        const n: number | undefined = args.n;
        const signal: AbortSignal | undefined = options.signal;
        // @ts-expect-error — `b` is not a parameter
        void args.b;
        // @ts-expect-error — no run id without `context: true`
        void options.runId;
        return { a, n, signal };
      },
    });
    const withContext = defineTool({
      name: "ctx",
      context: true,
      run: (_args, context) => {
        const ctx: ToolContext = context;
        return ctx.runId;
      },
    });
    const asTool: Tool = typed;
    const run: (args: { a: string; n?: number }, context: ToolContext | ToolRunOptions) => unknown = typed.run;
    assert.equal(asTool.name, "typed");
    assert.equal(typeof run, "function");
    assert.equal(withContext.context, true);
  });

  it("keeps name, description and flags, with defaults", () => {
    assert.equal(read.name, "fs.read");
    assert.equal(read.description, "Read a file");
    assert.equal(read.context, true);
    assert.equal(read.agentUse, true);
    assert.equal(help.agentUse, false);
    assert.equal(info.description, "");
    assert.equal(info.context, false);
  });

  it("derives a draft-07 JSON schema from the zod schema (defaults optional, no $schema)", () => {
    assert.deepEqual(read.inputSchema.required, ["path"]);
    assert.deepEqual(Object.keys(read.inputSchema.properties as object), ["path", "offset", "limit"]);
    assert.equal(read.inputSchema.$schema, undefined);
    assert.equal(read.inputSchema.type, "object");
    assert.deepEqual(info.inputSchema, { type: "object", properties: {} });
    assert.deepEqual((read.inputSchema.properties as Record<string, unknown>).offset, { type: "integer", default: 0 });
    assert.deepEqual((read.inputSchema.properties as Record<string, unknown>).limit, { anyOf: [{ type: "integer" }, { type: "null" }] });
  });

  it("builds the OpenAI function schema", () => {
    const schema = toolSchema(info);
    assert.deepEqual(schema, { type: "function", function: { name: "tape.info", description: "", parameters: info.inputSchema } });
  });

  it("builds parameters given as a function once, on first use, and keeps a given inputSchema", async () => {
    let built = 0;
    const lazy = defineTool({
      name: "lazy",
      parameters: () => {
        built++;
        return z.object({ text: z.string() });
      },
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      run: ({ text }) => text.toUpperCase(),
    });
    const renamed = toModelTools([lazy])[0]!;
    assert.deepEqual(renamed.inputSchema.required, ["text"]);
    assert.equal(built, 0, "neither the JSON schema nor renaming needs the zod schema");
    assert.equal(lazy.parameters.safeParse({ text: 1 }).success, false);
    assert.equal(renamed.parameters.safeParse({ text: "a" }).success, true);
    assert.equal(built, 1);
  });

  it("rejects an empty name", () => {
    assert.throws(() => defineTool({ name: " ", run: () => 1 }), /non-empty name/);
  });
});

describe("model-facing names", () => {
  it("replaces dots with underscores", () => {
    assert.equal(toModelToolName("fs.read"), "fs_read");
    assert.equal(toModelToolName("bash.output.x"), "bash_output_x");
  });

  it("modelTools keeps agent-usable tools only, renamed, leaving the originals unchanged", async () => {
    const tools = toModelTools([read, help, info]);
    assert.deepEqual(tools.map((tool) => tool.name), ["fs_read", "tape_info"]);
    assert.equal(read.name, "fs.read");
    assert.equal(tools[0]!.inputSchema, read.inputSchema);
    assert.equal(await tools[0]!.run({ path: "a", offset: 0 }, { tape: null as never, runId: "r", state: {}, signal: new AbortController().signal }), "r:a");
  });
});

describe("renderToolsPrompt", () => {
  it("lists agent-usable tools with optional parameters marked", () => {
    assert.equal(
      renderToolsPrompt([read, help, info]),
      "<available_tools>\n- fs_read(path, offset?, limit?): Read a file\n- tape_info()\n</available_tools>",
    );
  });

  it("is empty when no tool is agent-usable", () => {
    assert.equal(renderToolsPrompt([help]), "");
    assert.equal(renderToolsPrompt([]), "");
  });
});

describe("ToolRegistry", () => {
  it("replaces an earlier tool with the same name in place", () => {
    const registry = createToolRegistry([read, info]);
    const replacement = defineTool({ name: "fs.read", description: "new", run: () => "new" });
    registry.register(replacement);
    assert.deepEqual(registry.names(), ["fs.read", "tape.info"]);
    assert.equal(registry.get("fs.read"), replacement);
  });

  it("register returns a disposer that removes only its own tool", () => {
    const registry = createToolRegistry();
    const dispose = registry.register(read);
    const second = defineTool({ name: "fs.read", run: () => 2 });
    const disposeSecond = registry.register(second);
    dispose();
    assert.equal(registry.get("fs.read"), second, "replaced tool's disposer is a no-op");
    disposeSecond();
    assert.equal(registry.has("fs.read"), false);
  });

  it("resolves runtime names and aliases case-insensitively, trimming blanks", () => {
    const registry = createToolRegistry([read, info, help]);
    assert.equal(registry.resolveToolName("fs.read"), "fs.read");
    assert.equal(registry.resolveToolName("  FS_READ "), "fs.read");
    assert.equal(registry.resolveToolName("Tape_Info"), "tape.info");
    assert.equal(registry.resolveToolName("nope"), null);
    assert.equal(registry.resolveToolName("   "), null);
  });

  it("prefers a runtime name over another tool's alias", () => {
    const dotted = defineTool({ name: "a.b", run: () => 1 });
    const underscored = defineTool({ name: "a_b", run: () => 2 });
    assert.equal(createToolRegistry([underscored, dotted]).resolveToolName("a_b"), "a_b");
    assert.equal(createToolRegistry([dotted, underscored]).resolveToolName("a_b"), "a_b");
  });

  it("resolveToolNames: null means all minus excluded; names resolve through aliases", () => {
    const registry = createToolRegistry([read, info, help]);
    assert.deepEqual([...registry.resolveToolNames(null)], ["fs.read", "tape.info", "help"]);
    assert.deepEqual([...registry.resolveToolNames(null, ["fs_read"])], ["tape.info", "help"]);
    assert.deepEqual([...registry.resolveToolNames(["FS_READ", "tape.info"], ["tape_info"])], ["fs.read"]);
  });

  it("resolveToolNames reports unknown names sorted and repr-quoted as invalid_input", () => {
    const registry = createToolRegistry([read]);
    assert.throws(
      () => registry.resolveToolNames(["zeta", "fs.read", "alpha", "alpha"]),
      (error: unknown) => BubError.isInstance(error) && error.kind === "invalid_input" && error.message === "unknown tool name(s): 'alpha', 'zeta'",
    );
    assert.throws(() => registry.resolveToolNames(null, ["missing"]), { message: "unknown tool name(s): 'missing'" });
    assert.throws(() => registry.resolveToolNames(["it's"]), { message: `unknown tool name(s): "it's"` });
  });

  it("selects tools, model tools and the prompt block for a subset", () => {
    const registry = createToolRegistry([read, info, help]);
    assert.deepEqual(registry.select(["tape.info", "help"]).map((tool) => tool.name), ["tape.info", "help"]);
    assert.deepEqual(registry.modelTools().map((tool) => tool.name), ["fs_read", "tape_info"]);
    assert.deepEqual(registry.modelTools(["tape.info"]).map((tool) => tool.name), ["tape_info"]);
    assert.equal(registry.renderPrompt(["tape.info"]), "<available_tools>\n- tape_info()\n</available_tools>");
  });
});

describe("tool registry caches", () => {
  it("renders the prompt block again only after a tool is registered or removed", () => {
    const registry = createToolRegistry([defineTool({ name: "a.one", description: "first", run: () => "1" })]);
    const first = registry.renderPrompt();
    assert.equal(registry.renderPrompt(), first);
    const remove = registry.register(defineTool({ name: "b.two", description: "second", run: () => "2" }));
    assert.match(registry.renderPrompt(), /b_two.*second/);
    remove();
    assert.equal(registry.renderPrompt(), first);
  });

  it("hands out the same model-named copy of a tool each time", () => {
    const tool = defineTool({ name: "fs.thing", description: "d", run: () => "x" });
    const [copy] = toModelTools([tool]);
    assert.equal(copy!.name, "fs_thing");
    assert.equal(toModelTools([tool])[0], copy);
    assert.equal(renameTool(tool, "other").name, "other");
    assert.equal(renameTool(tool, "fs_thing").name, "fs_thing");
  });
});
