// Comma command mode: shell-style parsing, aliases, positional and keyword arguments,
// unknown names sent to bash, the recorded command event, and failures that never throw.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { BubError } from "../../src/kernel/errors.ts";
import type { Tape } from "../../src/tape/index.ts";
import { createShellManager } from "../../src/tools/builtin/shell-manager.ts";
import { builtinTools } from "../../src/tools/builtin/index.ts";
import { parseCommandArguments, runCommaCommand, isCommaCommand } from "../../src/tools/commands.ts";
import { registerTool, toolsOf } from "../../src/tools/global.ts";
import { createToolRegistry } from "../../src/tools/registry.ts";
import { splitShellWords } from "../../src/tools/shell-words.ts";
import { defineTool, type ToolContext } from "../../src/tools/tool.ts";
import { memoryTape, toolContext } from "./support/tool-context.ts";

const seen: Record<string, unknown>[] = [];
const probe = defineTool({
  name: "probe.args",
  parameters: z.object({ text: z.string(), count: z.number().int().default(1), flag: z.boolean().default(false), kinds: z.array(z.string()).optional() }),
  context: true,
  run: (args, context) => {
    seen.push({ ...args, runId: context.runId });
    return { echoed: args.text };
  },
});
const registry = createToolRegistry([...builtinTools({ shells: createShellManager() }), probe]);

async function commandEvents(tape: Tape): Promise<Record<string, unknown>[]> {
  const found = await tape.search(tape.query().kinds("event"));
  return found.filter((entry) => entry.payload.name === "command").map((entry) => entry.payload.data as Record<string, unknown>);
}

function run(line: string, context: ToolContext = toolContext({ session_id: "s" }, { workspace: process.cwd() })) {
  return runCommaCommand(line, { tools: registry, context });
}

describe("shell-style words", () => {
  it("honours quotes and escapes like shlex", () => {
    assert.deepEqual(splitShellWords(`a  'b c' "d \\"e\\"" f\\ g h=''`), ["a", "b c", 'd "e"', "f g", "h="]);
    assert.deepEqual(splitShellWords(`x='it'"'"'s'`), ["x=it's"]);
  });

  it("rejects unbalanced quotes", () => {
    assert.throws(() => splitShellWords(`fs.read path='a`), (error: unknown) => BubError.isInstance(error) && /No closing quotation/.test(error.message));
    assert.throws(() => splitShellWords(`echo "a`), /No closing quotation: a double quote is not closed/);
  });

  it("splits keyword arguments at the first = and refuses positionals after keywords", () => {
    assert.deepEqual(parseCommandArguments(["a", "b", "k=v=w"]), { positional: ["a", "b"], keywords: { k: "v=w" } });
    assert.throws(() => parseCommandArguments(["k=v", "c"]), { message: "positional argument 'c' cannot appear after keyword arguments" });
  });

  it("recognizes comma commands", () => {
    assert.equal(isCommaCommand("  ,help"), true);
    assert.equal(isCommaCommand("hello, world"), false);
    assert.equal(isCommaCommand([{ type: "text", text: ",help" }]), false);
  });
});

describe("runCommaCommand", () => {
  it("runs a tool with converted keyword arguments and run id run_command", async () => {
    const result = await run(`,probe.args text='hello world' count=3 flag=true kinds=message,event`);
    assert.deepEqual(result, { ok: true, output: '{"echoed":"hello world"}' });
    assert.deepEqual(seen.at(-1), { text: "hello world", count: 3, flag: true, kinds: ["message", "event"], runId: "run_command" });
  });

  it("fills parameters from positional words in schema order", async () => {
    await run(`,probe.args hi 7`);
    assert.deepEqual(seen.at(-1), { text: "hi", count: 7, flag: false, runId: "run_command" });
    assert.deepEqual(await run(`,probe.args a 1 true x y`), { ok: false, output: "too many positional arguments for 'probe.args': it takes at most 4 (text, count, flag, kinds)" });
    assert.deepEqual(await run(`,probe.args a text=b`), { ok: false, output: "argument 'text' is given twice" });
  });

  it("accepts the model-facing _ alias", async () => {
    assert.equal((await run(",tape_info")).output.split("\n")[0], "name: ws__session");
    assert.equal((await run(",help")).ok, true);
  });

  it("runs unknown names through bash with the whole line", async () => {
    assert.deepEqual(await run(`,echo "hi there" | tr a-z A-Z`), { ok: true, output: "HI THERE" });
  });

  it("records a command event for every command, failed ones included", async () => {
    const tape = memoryTape();
    const context = toolContext({ session_id: "s" }, { workspace: process.cwd(), tape });
    await run(",tape.handoff name=phase-1 summary='done'", context);
    const failed = await run(",bash cmd='echo boom; exit 2'", context);
    assert.deepEqual(failed, { ok: false, output: "command exited with code 2\noutput:\nboom" });
    const events = await commandEvents(tape);
    assert.equal(events.length, 2);
    assert.deepEqual(
      { ...events[0], elapsed_ms: 0, date: "" },
      { raw: "tape.handoff name=phase-1 summary='done'", name: "tape.handoff", status: "ok", elapsed_ms: 0, output: "anchor added: phase-1", date: "" },
    );
    assert.equal(events[1]!.status, "error");
    assert.equal(events[1]!.output, "command exited with code 2\noutput:\nboom");
    assert.equal(typeof events[1]!.elapsed_ms, "number");
    assert.match(String(events[1]!.date), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  });

  it("turns parse and validation failures into error results", async () => {
    const tape = memoryTape();
    const context = toolContext({}, { workspace: process.cwd(), tape });
    assert.deepEqual(await run(",fs.read path='README.md", context), { ok: false, output: "No closing quotation: a single quote is not closed" });
    assert.deepEqual(await run(",fs.read a offset=1 c", context), { ok: false, output: "positional argument 'c' cannot appear after keyword arguments" });
    assert.deepEqual(await run(",", context), { ok: false, output: "empty command: type ,help to list the commands" });
    const invalid = await run(",fs.read offset=abc", context);
    assert.equal(invalid.ok, false);
    assert.match(invalid.output, /^Tool 'fs.read' argument validation failed\.\n- path: .+\n- offset: /);
    assert.deepEqual((await commandEvents(tape)).map((event) => [event.name, event.status]), [
      ["fs.read", "error"],
      ["fs.read", "error"],
      ["", "error"],
      ["fs.read", "error"],
    ]);
  });

  it("reads a file relative to the workspace", async () => {
    const result = await run(",fs.read path=package.json limit=1");
    assert.deepEqual(result, { ok: true, output: "{" });
  });
});

describe("a framework's tool registry", () => {
  const toolRegistry = toolsOf({});

  it("holds the builtin tools and takes plugin tools with a disposer", () => {
    assert.ok(toolRegistry.has("bash") && toolRegistry.has("fs.read") && toolRegistry.has("reasoning_effort"));
    const owner = {};
    const dispose = registerTool(owner, defineTool({ name: "clock.now", run: () => "now" }));
    assert.equal(toolsOf(owner).resolveToolName("clock_now"), "clock.now");
    assert.equal(toolRegistry.has("clock.now"), false, "another framework never sees the tool");
    dispose();
    assert.equal(toolsOf(owner).has("clock.now"), false);
  });

  it("lists every builtin tool of the spec", () => {
    assert.deepEqual(toolRegistry.names().sort(), [
      "bash", "bash.kill", "bash.output", "fs.edit", "fs.read", "fs.write", "help", "model", "quit", "reasoning_effort",
      "skill", "spill.read", "subagent", "tape.anchors", "tape.handoff", "tape.info", "tape.reset", "tape.search", "web.fetch",
    ]);
  });
});
