/** Small builders for tool tests: a memory tape, a context over it, and a hand-written runtime agent. */
import { BubError } from "../../../src/kernel/errors.ts";
import { AsyncStreamEvents, type StreamEvent } from "../../../src/kernel/stream.ts";
import type { TurnState } from "../../../src/kernel/types.ts";
import type { TapeSidecar } from "../../../src/kernel/tape-contract.ts";
import { createMemoryTapeStore, createTape, type Tape } from "../../../src/tape/index.ts";
import { invokeTool } from "../../../src/tools/executor.ts";
import { createToolRegistry, type ToolRegistry } from "../../../src/tools/registry.ts";
import type { RunStreamOptions, RuntimeAgent } from "../../../src/tools/runtime-agent.ts";
import type { Tool, ToolContext } from "../../../src/tools/tool.ts";
import type { Prompt } from "../../../src/kernel/envelope.ts";
import { testTurnContext } from "../../support/framework.ts";

/** A tape over a fresh memory store. */
export function memoryTape(options: { sidecars?: TapeSidecar[]; archivePath?: string } = {}): Tape {
  return createTape({ name: "ws__session", store: createMemoryTapeStore(), sidecars: options.sidecars, archivePath: options.archivePath ?? "/nonexistent" });
}

/** What a test tool context may carry besides its state. */
export interface ToolContextOptions {
  tape?: Tape;
  /** The turn's workspace (a turn over a kernel framework); absent: no turn. */
  workspace?: string;
  agent?: RuntimeAgent;
  signal?: AbortSignal;
}

/** A tool context with `state`, over a memory tape unless one is given. */
export function toolContext(state: TurnState = {}, options: ToolContextOptions = {}): ToolContext<Tape> {
  const signal = options.signal ?? new AbortController().signal;
  const context: ToolContext<Tape> = { tape: options.tape ?? memoryTape(), runId: "run-test", state, signal };
  const turn = options.workspace === undefined ? undefined : testTurnContext({ workspace: options.workspace, signal });
  return { ...context, ...(turn ? { turn } : {}), ...(options.agent ? { agent: options.agent } : {}) };
}

/** Runs a tool by name from `tools` with raw arguments, as the executor would. */
export async function call(tools: readonly Tool[], name: string, args: Record<string, unknown>, context: ToolContext | null = toolContext()): Promise<unknown> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return invokeTool(tool, args, context, { reporter: { start() {}, success() {}, error() {} } });
}

/** The message of the BubError `promise` rejects with. */
export async function errorOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (BubError.isInstance(error)) return error.message;
    throw error;
  }
  throw new Error("expected a rejection");
}

/** One recorded `runStream` call of a {@link FakeAgent}. */
export interface RunStreamCall {
  sessionId: string;
  prompt: Prompt;
  state: TurnState;
  options: RunStreamOptions | undefined;
}

/** A hand-written {@link RuntimeAgent} that records its calls. */
export interface FakeAgent extends RuntimeAgent {
  readonly runs: RunStreamCall[];
  readonly quits: string[];
}

/** A runtime agent whose `runStream` yields `events` and whose config is `config`. */
export function fakeAgent(options: { tools?: ToolRegistry | Tool[]; events?: StreamEvent[]; config?: Record<string, unknown>; workspace?: string } = {}): FakeAgent {
  const runs: RunStreamCall[] = [];
  const quits: string[] = [];
  const tools = Array.isArray(options.tools) ? createToolRegistry(options.tools) : (options.tools ?? createToolRegistry());
  const events = options.events ?? [{ kind: "text", data: { delta: "done" } }];
  return {
    runs,
    quits,
    tools,
    async runStream(sessionId, prompt, state, runOptions) {
      runs.push({ sessionId, prompt, state, options: runOptions });
      return new AsyncStreamEvents(
        (async function* () {
          yield* events;
        })(),
      );
    },
    async quitSession(sessionId) {
      quits.push(sessionId);
    },
    configValue(path) {
      let value: unknown = options.config ?? {};
      for (const part of path.split(".")) {
        if (typeof value !== "object" || value === null) return undefined;
        value = (value as Record<string, unknown>)[part];
      }
      return value;
    },
  };
}
