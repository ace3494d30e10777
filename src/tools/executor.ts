/**
 * Runs the tool calls of one model step: concurrently, results in call order, each through
 * the `beforeToolCall` / `afterToolCall` interception hooks, with every failure turned into
 * a {@link BubError} the model sees as the tool's result.
 */
import { z } from "zod";
import { BubError, type BubErrorData } from "../kernel/errors.ts";
import type { ToolCall, ToolCallDecision, ToolCallResult } from "../kernel/interception.ts";
import type { TurnState } from "../kernel/types.ts";
import { withCorrelation } from "../kernel/correlation.ts";
import { closestToolNames } from "./suggest.ts";
import { reportToolError, reportToolStart, reportToolSuccess, type ToolCallReporter } from "./reporting.ts";
import { defineTool, type Tool, type ToolContext } from "./tool.ts";

/** The interception hooks a tool call goes through (`beforeToolCall`, `afterToolCall`); the agent's `AgentHooks` implements them. */
export interface ToolCallHooks {
  /** `signal` is the call's context's (it aborts when the turn is cancelled). */
  beforeToolCall(call: ToolCall, state: TurnState, signal: AbortSignal): Promise<{ call: ToolCall; decision: ToolCallDecision }>;
  afterToolCall(call: ToolCall, result: ToolCallResult, state: TurnState, signal: AbortSignal): Promise<void>;
}

/** One call to run: a tool (named as the model called it) and its decoded arguments. */
export interface ToolInvocation {
  readonly tool: Tool;
  readonly arguments: Record<string, unknown>;
  /** The model's id for the call, handed to the hooks as `ToolCall.callId`. */
  readonly callId?: string;
}

/** The outcome of a batch: one entry per invocation (a failure as its error data). */
export interface ToolExecution {
  /** Each tool's result, or `{ kind, message, details? }` for a failed call. */
  readonly toolResults: unknown[];
  /** The error of the last failed call, if any. */
  readonly error: BubError | null;
  /** Per invocation, its error or null. */
  readonly errors: readonly (BubError | null)[];
  /** Per invocation, its wall time in ms (hooks included). */
  readonly elapsedMs?: readonly number[];
}

/** Options of {@link createToolExecutor}. */
export interface ToolExecutorOptions {
  /** Interception hooks; none: tools run directly. */
  readonly hooks?: ToolCallHooks | null;
  /** Receives each tool call; default: the turn's (`context.turn.toolReporter`), else the log. */
  readonly reporter?: ToolCallReporter | null;
}

/** Executes batches of tool calls. */
export interface ToolExecutor<TTape = unknown> {
  /**
   * Runs every invocation concurrently and returns their results in order. A tool failure
   * becomes that call's result (the model sees it and the turn goes on); only
   * cancellation (an aborted `context.signal`) rejects.
   */
  execute(invocations: readonly ToolInvocation[], context?: ToolContext<TTape> | null): Promise<ToolExecution>;
}

/** Readable validation issues: `{ path: "a.b", message, code }`. */
export function validationIssues(error: z.ZodError): { path: string; message: string; code: string }[] {
  return error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)",
    message: issue.message,
    code: issue.code,
  }));
}

function cancelled(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** The failure of a tool the step does not have; it reaches the model as it is. */
class UnknownToolError extends BubError {}

/**
 * A BubError a tool threw, in the shape every failing tool call has on the model's side (as
 * in the reference): its kind, the message `Tool '<name>' execution failed.`, and the
 * tool's own message in `details.error` (next to the error's own details).
 */
export function toolFailure(name: string, error: BubError): BubError {
  return new BubError(error.kind, `Tool '${name}' execution failed.`, { details: { ...error.details, error: error.message }, cause: error });
}

/**
 * Calls one tool with raw arguments, without interception hooks: validates the arguments,
 * runs the tool, reports the call, and normalizes failures.
 *
 * @throws BubError `invalid_input` when a context tool gets no context or the arguments do
 *   not validate; `tool` when the tool throws anything but a BubError, which passes through
 *   unless `options.uniformFailures` is set (the executor sets it): then it is rethrown as
 *   {@link toolFailure}. When `signal` is aborted the tool's own error is rethrown unchanged.
 */
export async function invokeTool<TTape>(
  tool: Tool,
  args: Record<string, unknown>,
  context: ToolContext<TTape> | null | undefined,
  options: { reporter?: ToolCallReporter | null; signal?: AbortSignal; uniformFailures?: boolean } = {},
): Promise<unknown> {
  if (tool.context && !context) {
    throw new BubError("invalid_input", `Tool '${tool.name}' requires context but none was provided.`);
  }
  const signal = options.signal ?? context?.signal;
  const reporter = options.reporter ?? context?.turn?.toolReporter ?? undefined;
  await reportToolStart(reporter, tool.name, args);
  const started = performance.now();
  let validated = false;
  try {
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      throw new BubError("invalid_input", `Tool '${tool.name}' argument validation failed.`, {
        details: { errors: validationIssues(parsed.error) },
        cause: parsed.error,
      });
    }
    validated = true;
    // A context tool without a context was refused above.
    const runContext = tool.context && context ? context : { signal };
    const result = await tool.run(parsed.data, runContext);
    await reportToolSuccess(reporter, tool.name, result, performance.now() - started);
    return result;
  } catch (error) {
    await reportToolError(reporter, tool.name, error, performance.now() - started, cancelled(signal));
    if (cancelled(signal) && !BubError.isInstance(error)) throw error;
    if (BubError.isInstance(error)) {
      throw validated && options.uniformFailures === true && !(error instanceof UnknownToolError) ? toolFailure(tool.name, error) : error;
    }
    if (error instanceof z.ZodError) {
      throw new BubError("invalid_input", `Tool '${tool.name}' argument validation failed.`, { details: { errors: validationIssues(error) }, cause: error });
    }
    throw new BubError("tool", `Tool '${tool.name}' execution failed.`, { details: { error: String(error) }, cause: error });
  }
}

/**
 * A stand-in for a tool the model named but the step does not have; running it fails with
 * the closest of `available` (the step's tool names) so the model can correct itself.
 */
export function unknownTool(name: string, available: Iterable<string> = []): Tool {
  const closest = closestToolNames(name, available);
  const hint = closest.length > 0 ? ` Closest tool names: ${closest.join(", ")}.` : "";
  return defineTool({
    name: name || "(unnamed)",
    parameters: z.looseObject({}),
    run: () => {
      throw new UnknownToolError("tool", `Unknown tool name: ${name}.${hint}`);
    },
  });
}

class DefaultToolExecutor<TTape> implements ToolExecutor<TTape> {
  readonly #hooks: ToolCallHooks | null;
  readonly #reporter: ToolCallReporter | null;

  constructor(options: ToolExecutorOptions) {
    this.#hooks = options.hooks ?? null;
    this.#reporter = options.reporter ?? null;
  }

  async execute(invocations: readonly ToolInvocation[], context: ToolContext<TTape> | null = null): Promise<ToolExecution> {
    if (invocations.length === 0) return { toolResults: [], error: null, errors: [] };
    const elapsedMs = invocations.map(() => 0);
    // What a call writes carries its id as meta.tool_call_id (issue 19).
    const settled = await Promise.allSettled(
      invocations.map(async (invocation, index) => {
        const started = performance.now();
        try {
          return await withCorrelation({ toolCallId: invocation.callId }, () => this.#handle(invocation, context));
        } finally {
          elapsedMs[index] = Math.round(performance.now() - started);
        }
      }),
    );
    const toolResults: unknown[] = [];
    const errors: (BubError | null)[] = [];
    let error: BubError | null = null;
    for (const outcome of settled) {
      if (outcome.status === "fulfilled") {
        toolResults.push(outcome.value);
        errors.push(null);
      } else if (BubError.isInstance(outcome.reason)) {
        error = outcome.reason;
        errors.push(outcome.reason);
        toolResults.push(outcome.reason.toData() satisfies BubErrorData);
      } else {
        throw outcome.reason;
      }
    }
    return { toolResults, error, errors, elapsedMs };
  }

  async #handle(invocation: ToolInvocation, context: ToolContext<TTape> | null): Promise<unknown> {
    const { tool } = invocation;
    let call: ToolCall = { runId: context?.runId ?? "", tool: tool.name, arguments: { ...invocation.arguments }, ...(invocation.callId ? { callId: invocation.callId } : {}) };
    const hooks = this.#hooks;
    const state: TurnState = context?.state ?? {};
    // The hooks get the context's signal, else one nobody aborts.
    const signal = context?.signal ?? new AbortController().signal;
    const started = performance.now();

    if (hooks) {
      const answer = await hooks.beforeToolCall(call, state, signal);
      call = answer.call;
      const decision = answer.decision;
      if (decision.action === "deny") {
        const denied = new BubError("tool", decision.message || `Tool '${call.tool}' call denied by policy hook.`);
        await this.#after(call, state, signal, started, null, denied);
        throw denied;
      }
      if (decision.action === "replace") {
        return (await this.#after(call, state, signal, started, decision.result, null)).result;
      }
    }

    let result: unknown;
    try {
      result = await invokeTool(tool, call.arguments, context, { reporter: this.#reporter, signal: context?.signal, uniformFailures: true });
    } catch (error) {
      if (BubError.isInstance(error)) await this.#after(call, state, signal, started, null, error);
      throw error;
    }
    return (await this.#after(call, state, signal, started, result, null)).result;
  }

  async #after(call: ToolCall, state: TurnState, signal: AbortSignal, started: number, result: unknown, error: BubError | null): Promise<ToolCallResult> {
    const outcome: ToolCallResult = {
      runId: call.runId,
      tool: call.tool,
      arguments: call.arguments,
      result: error ? null : result,
      error,
      durationMs: Math.round(performance.now() - started),
    };
    if (this.#hooks) await this.#hooks.afterToolCall(call, outcome, state, signal);
    return outcome;
  }
}

/**
 * A {@link ToolExecutor}; with `hooks`, every call goes through `beforeToolCall` /
 * `afterToolCall`.
 *
 * ```ts
 * const executor = createToolExecutor({ hooks: new AgentHooks(framework.runtime) });
 * const { toolResults, error } = await executor.execute([{ tool, arguments: { path: "a" } }], context);
 * ```
 */
export function createToolExecutor<TTape = unknown>(options: ToolExecutorOptions = {}): ToolExecutor<TTape> {
  return new DefaultToolExecutor<TTape>(options);
}
