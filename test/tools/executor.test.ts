import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { AgentHooks } from "../../src/agent/interceptors.ts";
import type { TurnContext } from "../../src/kernel/turn-context.ts";
import { testTurnContext } from "../support/framework.ts";
import { BubError } from "../../src/kernel/errors.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { deny, proceed, replace, type ToolCall, type ToolCallResult } from "../../src/kernel/interception.ts";
import { setLogSink, type LogLevel } from "../../src/kernel/log.ts";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import type { TurnState } from "../../src/kernel/types.ts";
import { createToolExecutor, invokeTool, unknownTool, type ToolInvocation } from "../../src/tools/executor.ts";
import { toolCallStartLine, type ToolCallReporter } from "../../src/tools/reporting.ts";
import { defineTool, type Tool, type ToolContext } from "../../src/tools/tool.ts";

/** An AgentHooks over a real HookRuntime; plugins are registered in order (last runs first). */
function hooksWith(...plugins: BubPlugin[]): AgentHooks {
  const runtime = new HookRuntime();
  plugins.forEach((plugin, index) => runtime.register(plugin, plugin.name ?? `plugin-${index}`));
  return new AgentHooks(runtime, testTurnContext());
}

function context(state: TurnState = {}, extra: Partial<ToolContext<string>> = {}): ToolContext<string> {
  return { tape: "tape-1", runId: "run-1", state, signal: new AbortController().signal, ...extra };
}

async function captureLogs<T>(body: () => Promise<T>): Promise<{ result: T; logs: { level: LogLevel; namespace: string; message: string; error: unknown }[] }> {
  const logs: { level: LogLevel; namespace: string; message: string; error: unknown }[] = [];
  const restore = setLogSink((level, namespace, message, error) => logs.push({ level, namespace, message, error }));
  try {
    return { result: await body(), logs };
  } finally {
    restore();
  }
}

const echo = defineTool({
  name: "echo",
  parameters: z.object({ text: z.string(), times: z.number().int().default(1) }),
  run: ({ text, times }) => text.repeat(times),
});

const call = (tool: Tool = echo, args: Record<string, unknown> = { text: "hi" }): ToolInvocation => ({ tool, arguments: args });

describe("ToolExecutor", () => {
  it("returns nothing for no invocations", async () => {
    assert.deepEqual(await createToolExecutor().execute([]), { toolResults: [], error: null, errors: [] });
  });

  it("runs calls concurrently and keeps results in call order", { timeout: 10_000 }, async () => {
    let releaseFirst!: () => void;
    const firstMayFinish = new Promise<void>((resolve) => (releaseFirst = resolve));
    const order: string[] = [];
    const first = defineTool({
      name: "first",
      run: async () => {
        order.push("first:start");
        await firstMayFinish; // only the second call can release this: proves concurrency
        order.push("first:end");
        return "one";
      },
    });
    const second = defineTool({
      name: "second",
      run: () => {
        order.push("second");
        releaseFirst();
        return "two";
      },
    });
    const execution = await createToolExecutor().execute([call(first, {}), call(second, {})]);
    assert.deepEqual(execution.toolResults, ["one", "two"]);
    assert.deepEqual(order, ["first:start", "second", "first:end"]);
  });

  it("validates arguments with zod; a failure is an invalid_input result with readable issues", async () => {
    const execution = await createToolExecutor().execute([call(echo, { times: "x" }), call(echo, { text: "ok" })]);
    assert.deepEqual(execution.toolResults[0], {
      kind: "invalid_input",
      message: "Tool 'echo' argument validation failed.",
      details: {
        errors: [
          { path: "text", message: "Invalid input: expected string, received undefined", code: "invalid_type" },
          { path: "times", message: "Invalid input: expected number, received string", code: "invalid_type" },
        ],
      },
    });
    assert.equal(execution.toolResults[1], "ok");
    assert.equal(execution.error?.kind, "invalid_input");
    assert.deepEqual(execution.errors.map((error) => error?.kind ?? null), ["invalid_input", null]);
  });

  it("passes parsed arguments (defaults applied) to the tool", async () => {
    const execution = await createToolExecutor().execute([call(echo, { text: "ab", times: 2 }), call(echo, { text: "c" })]);
    assert.deepEqual(execution.toolResults, ["abab", "c"]);
  });

  it("turns a throwing tool into a tool error with the original error in details", async () => {
    const broken = defineTool({
      name: "broken",
      run: () => {
        throw new RangeError("boom");
      },
    });
    const { result } = await captureLogs(() => createToolExecutor().execute([call(broken, {})]));
    assert.deepEqual(result.toolResults[0], { kind: "tool", message: "Tool 'broken' execution failed.", details: { error: "RangeError: boom" } });
    assert.equal(result.error?.kind, "tool");
    assert.ok(result.error?.cause instanceof RangeError);
  });

  it("gives a BubError thrown by the tool the same shape, keeping its kind and details; a direct call gets it unchanged", async () => {
    const original = new BubError("not_found", "Anchor 'x' was not found.", { details: { anchor: "x" } });
    const notFound = defineTool({
      name: "tape.lookup",
      run: () => {
        throw original;
      },
    });
    const { result } = await captureLogs(() => createToolExecutor().execute([call(notFound, {})]));
    assert.deepEqual(result.toolResults, [{ kind: "not_found", message: "Tool 'tape.lookup' execution failed.", details: { anchor: "x", error: "Anchor 'x' was not found." } }]);
    assert.equal(result.error?.cause, original);
    await captureLogs(() => assert.rejects(invokeTool(notFound, {}, null), (error) => error === original));
  });

  it("leaves argument validation failures in their own shape", async () => {
    const { result } = await captureLogs(() => createToolExecutor().execute([call(echo, { text: 5 })]));
    assert.equal((result.toolResults[0] as { message: string }).message, "Tool 'echo' argument validation failed.");
  });

  it("gives context tools a ToolContext and refuses them when there is none", async () => {
    const seen: unknown[] = [];
    const contextual = defineTool({
      name: "ctx",
      context: true,
      run: (_args, ctx: ToolContext<string>) => {
        seen.push(ctx.tape, ctx.runId, ctx.state.session_id);
        return "done";
      },
    });
    const withContext = await createToolExecutor<string>().execute([call(contextual, {})], context({ session_id: "s1" }));
    assert.deepEqual(withContext.toolResults, ["done"]);
    assert.deepEqual(seen, ["tape-1", "run-1", "s1"]);
    const without = await createToolExecutor().execute([call(contextual, {})]);
    assert.deepEqual(without.toolResults, [{ kind: "invalid_input", message: "Tool 'ctx' requires context but none was provided." }]);
  });

  it("reports a placeholder for an unknown tool name as a tool error", async () => {
    const { result } = await captureLogs(() => createToolExecutor().execute([call(unknownTool("fs_raed"), { path: "x" })]));
    assert.deepEqual(result.toolResults, [{ kind: "tool", message: "Unknown tool name: fs_raed." }]);
  });

  describe("with interception hooks", () => {
    it("hands the hooks the turn's typed context and the call's state", async () => {
      const seen: { context: TurnContext; state: TurnState }[] = [];
      const hooks = hooksWith({ beforeToolCall: ({ context, state }) => void seen.push({ context, state }) });
      const state: TurnState = { session_id: "s" };
      await createToolExecutor<string>({ hooks }).execute([call()], context(state));
      assert.equal(seen.length, 1);
      assert.equal(seen[0]?.state, state);
      assert.equal(seen[0]?.context.sessionId, "test:1");
    });

    it("deny: the tool does not run; the model sees a tool error; the after-hook sees it", async () => {
      let ran = false;
      const tool = defineTool({ name: "rm", run: () => void (ran = true) });
      const afters: ToolCallResult[] = [];
      const hooks = hooksWith(
        { afterToolCall: ({ result }) => void afters.push({ ...result }) },
        { beforeToolCall: ({ call: c }) => (c.tool === "rm" ? deny("rm is not allowed here") : null) },
      );
      const execution = await createToolExecutor<string>({ hooks }).execute([call(tool, {})], context());
      assert.equal(ran, false);
      assert.deepEqual(execution.toolResults, [{ kind: "tool", message: "rm is not allowed here" }]);
      assert.equal(afters.length, 1);
      assert.equal(afters[0]!.result, null);
      assert.equal(afters[0]!.error?.message, "rm is not allowed here");
      assert.equal(afters[0]!.runId, "run-1");
    });

    it("deny without a message uses the default policy message", async () => {
      const hooks = hooksWith({ beforeToolCall: () => deny("") });
      const execution = await createToolExecutor({ hooks }).execute([call()]);
      assert.deepEqual(execution.toolResults, [{ kind: "tool", message: "Tool 'echo' call denied by policy hook." }]);
    });

    it("replace: the replacement is the result, after the after-hook may change it", async () => {
      let ran = false;
      const tool = defineTool({ name: "web.fetch", run: () => void (ran = true) });
      const hooks = hooksWith(
        {
          afterToolCall: ({ result }) => {
            assert.equal(result.result, "cached page");
            result.result = `${String(result.result)} (from cache)`;
          },
        },
        { beforeToolCall: () => replace("cached page") },
      );
      const execution = await createToolExecutor({ hooks }).execute([call(tool, {})]);
      assert.equal(ran, false);
      assert.deepEqual(execution.toolResults, ["cached page (from cache)"]);
      assert.equal(execution.error, null);
    });

    it("proceed with arguments replaces them for later plugins, validation and the tool", async () => {
      const seenByLower: Record<string, unknown>[] = [];
      const calls: ToolCall[] = [];
      const hooks = hooksWith(
        { afterToolCall: ({ call: c }) => void calls.push(c) },
        { beforeToolCall: ({ call: c }) => void seenByLower.push(c.arguments) },
        { beforeToolCall: () => proceed({ text: "rewritten", times: 2 }) },
      );
      const execution = await createToolExecutor({ hooks }).execute([call(echo, { text: "original" })]);
      assert.deepEqual(execution.toolResults, ["rewrittenrewritten"]);
      assert.deepEqual(seenByLower, [{ text: "rewritten", times: 2 }]);
      assert.deepEqual(calls[0]!.arguments, { text: "rewritten", times: 2 });
    });

    it("proceed with invalid arguments fails validation like the model's own would", async () => {
      const hooks = hooksWith({ beforeToolCall: () => proceed({ text: 5 }) });
      const execution = await createToolExecutor({ hooks }).execute([call()]);
      assert.equal((execution.toolResults[0] as { message: string }).message, "Tool 'echo' argument validation failed.");
    });

    it("fires the after-hook for success and failure, and its mutation changes what the model sees", async () => {
      const broken = defineTool({
        name: "broken",
        run: () => {
          throw new Error("nope");
        },
      });
      const outcomes: { tool: string; result: unknown; error: string | null; durationMs: number }[] = [];
      const hooks = hooksWith({
        afterToolCall: ({ result }) => {
          outcomes.push({ tool: result.tool, result: result.result, error: result.error?.message ?? null, durationMs: result.durationMs });
          if (result.error === null) result.result = `${String(result.result)}!`;
        },
      });
      const { result: execution } = await captureLogs(() => createToolExecutor({ hooks }).execute([call(), call(broken, {})]));
      assert.deepEqual(execution.toolResults, ["hi!", { kind: "tool", message: "Tool 'broken' execution failed.", details: { error: "Error: nope" } }]);
      assert.deepEqual(
        outcomes.map(({ durationMs, ...rest }) => (assert.ok(durationMs >= 0), rest)).sort((a, b) => a.tool.localeCompare(b.tool)),
        [
          { tool: "broken", result: null, error: "Tool 'broken' execution failed." },
          { tool: "echo", result: "hi", error: null },
        ],
      );
    });

    it("isolates a throwing hook: it is logged, counts as no answer, and the rest still run", async () => {
      const calls: string[] = [];
      const hooks = hooksWith(
        { name: "low", beforeToolCall: () => void calls.push("low") },
        {
          name: "bad",
          beforeToolCall: () => {
            calls.push("bad");
            throw new Error("hook exploded");
          },
          afterToolCall: () => {
            throw new Error("after exploded");
          },
        },
      );
      const { result, logs } = await captureLogs(() => createToolExecutor({ hooks }).execute([call()]));
      assert.deepEqual(result.toolResults, ["hi"]);
      assert.deepEqual(calls, ["bad", "low"]);
      const failures = logs.filter((log) => log.message.startsWith("hook.agent_hook_failed")).map((log) => log.message);
      assert.deepEqual(failures, ["hook.agent_hook_failed hook=beforeToolCall adapter=bad", "hook.agent_hook_failed hook=afterToolCall adapter=bad"]);
    });

    it("passes the model-facing name as ToolCall.tool", async () => {
      const seen: string[] = [];
      const hooks = hooksWith({ beforeToolCall: ({ call: c }) => void seen.push(c.tool) });
      const aliased = defineTool({ name: "fs_read", run: () => "x" });
      await createToolExecutor({ hooks }).execute([call(aliased, {})]);
      assert.deepEqual(seen, ["fs_read"]);
    });
  });

  it("propagates cancellation without an after-hook", async () => {
    const controller = new AbortController();
    const slow = defineTool({
      name: "slow",
      run: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
          controller.abort(new Error("turn cancelled"));
        }),
    });
    let afterCalls = 0;
    const hooks = hooksWith({ afterToolCall: () => void afterCalls++ });
    const { result } = await captureLogs(() =>
      createToolExecutor<string>({ hooks })
        .execute([call(slow, {}), call()], context({}, { signal: controller.signal }))
        .then(
          () => "resolved",
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        ),
    );
    assert.equal(result, "turn cancelled");
    assert.equal(afterCalls, 1, "only the call that finished normally is observed");
  });
});

describe("tool call reporting", () => {
  const recordingReporter = (events: string[]): ToolCallReporter => ({
    start: (name, args) => void events.push(`start ${name} ${JSON.stringify(args)}`),
    success: (name, result, elapsedMs) => void events.push(`success ${name} ${String(result)} ${elapsedMs >= 0}`),
    error: (name, error) => void events.push(`error ${name} ${error instanceof Error ? error.message : String(error)}`),
  });

  it("logs start and success lines when no reporter is active", async () => {
    const long = "x".repeat(150);
    const { logs } = await captureLogs(() => invokeTool(echo, { text: long }, null));
    const messages = logs.filter((log) => log.namespace === "bub:tools").map((log) => log.message);
    assert.equal(messages[0], `tool.call.start name=echo { text="${"x".repeat(96)}..." }`);
    assert.match(messages[1]!, /^tool\.call\.success name=echo elapsed_time=\d+\.\d{2}ms$/);
  });

  it("logs an error line for a failing tool", async () => {
    const broken = defineTool({
      name: "broken",
      run: () => {
        throw new Error("bad");
      },
    });
    const { logs } = await captureLogs(() => invokeTool(broken, {}, null).catch(() => undefined));
    const errorLog = logs.find((log) => log.message.startsWith("tool.call.error"));
    assert.equal(errorLog?.level, "error");
    assert.match(errorLog!.message, /^tool\.call\.error name=broken elapsed_time=\d+\.\d{2}ms$/);
  });

  it("formats start lines like the reference", () => {
    assert.equal(toolCallStartLine("t", {}), "tool.call.start name=t");
    assert.equal(toolCallStartLine("t", { a: 1, b: { c: [1, 2] } }), 'tool.call.start name=t { a=1, b={"c":[1,2]} }');
    assert.equal(toolCallStartLine("t", { list: Array.from({ length: 60 }, (_, i) => i) }).endsWith("...] }"), true);
  });

  it("sends calls to an explicit reporter instead of the log", async () => {
    const events: string[] = [];
    const { logs } = await captureLogs(() => createToolExecutor({ reporter: recordingReporter(events) }).execute([call()]));
    assert.deepEqual(events, ['start echo {"text":"hi"}', "success echo hi true"]);
    assert.equal(logs.filter((log) => log.message.startsWith("tool.call")).length, 0);
  });

  it("sends the calls of a turn whose context names a reporter to it, and logs them again once it is gone", async () => {
    const events: string[] = [];
    const turn = testTurnContext();
    turn.toolReporter = recordingReporter(events);
    const { logs } = await captureLogs(() => createToolExecutor<string>().execute([call(echo, { text: "a" })], context({}, { turn })));
    assert.deepEqual(events, ['start echo {"text":"a"}', "success echo a true"]);
    assert.equal(logs.filter((log) => log.message.startsWith("tool.call")).length, 0);
    turn.toolReporter = null;
    const after = await captureLogs(() => createToolExecutor<string>().execute([call(echo, { text: "b" })], context({}, { turn })));
    assert.equal(events.length, 2);
    assert.equal(after.logs.filter((log) => log.message.startsWith("tool.call")).length, 2);
  });

  it("prefers an explicit reporter to the turn's", async () => {
    const explicit: string[] = [];
    const turns: string[] = [];
    const turn = testTurnContext();
    turn.toolReporter = recordingReporter(turns);
    await createToolExecutor<string>({ reporter: recordingReporter(explicit) }).execute([call(echo, { text: "c" })], context({}, { turn }));
    assert.deepEqual(explicit, ['start echo {"text":"c"}', "success echo c true"]);
    assert.deepEqual(turns, []);
  });

  it("keeps a failing reporter from breaking the tool call", async () => {
    const reporter: ToolCallReporter = {
      start: () => {
        throw new Error("terminal gone");
      },
      success: () => undefined,
      error: () => undefined,
    };
    const { result, logs } = await captureLogs(() => createToolExecutor({ reporter }).execute([call()]));
    assert.deepEqual(result.toolResults, ["hi"]);
    assert.ok(logs.some((log) => log.message === "tool.reporter_failed hook=start"));
  });
});
