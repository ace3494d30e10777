/**
 * The hooks only the agent loop calls, with their answers checked: the system prompt, the
 * tape context and sidecars, the prompt that continues the loop, the models a session
 * may use, and the sandbox its tools run in.
 */
import type { Prompt } from "../kernel/envelope.ts";
import type { HookRuntime } from "../kernel/runtime.ts";
import type { Sandbox } from "../kernel/sandbox.ts";
import type { StreamState } from "../kernel/stream.ts";
import { isTapeContext, type TapeContext, type TapeHandle, type TapeSidecar } from "../kernel/tape-contract.ts";
import type { TurnState } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import { createHostSandbox } from "../tools/sandbox-host.ts";

/** The system prompt: every plugin's fragment, lowest precedence first, joined by a blank line. */
export function systemPromptOf(runtime: HookRuntime, prompt: Prompt, state: TurnState): string {
  const parts = runtime.callManySync("systemPrompt", { prompt, state });
  return parts.filter((part): part is string => typeof part === "string" && part.length > 0).reverse().join("\n\n");
}

/** Sidecars to mount on every tape, deduplicated by name (higher precedence wins). */
export function tapeSidecarsOf(runtime: HookRuntime): TapeSidecar[] {
  const sidecars = new Map<string, TapeSidecar>();
  for (const sidecar of runtime.callManySync("provideTapeSidecar", {})) {
    if (sidecar && !sidecars.has(sidecar.name)) sidecars.set(sidecar.name, sidecar);
  }
  return [...sidecars.values()];
}

/** The tape context a plugin provides; a plugin must answer with a TapeContext. */
export function tapeContextOf(runtime: HookRuntime): TapeContext {
  const context = runtime.callFirstSync("buildTapeContext", {});
  if (!isTapeContext(context)) throw new TypeError("hook.buildTapeContext must return TapeContext");
  return context;
}

/** The prompt that continues the agent loop; a plugin must answer with a string. */
export async function continuePromptOf(runtime: HookRuntime, prompt: Prompt, tape: TapeHandle, state: StreamState, context: TurnContext): Promise<string> {
  const answer = await runtime.callFirst("continuePrompt", { prompt, tape, state, context, signal: context.signal });
  if (typeof answer !== "string") throw new TypeError("hook.continuePrompt must return string");
  return answer;
}

/**
 * Where a session's tools run this turn: the first plugin's `provideSandbox` answer, else
 * the host in `workspace`, set up from the agent's `config` (its commands keep the
 * variables `tool_env_passthrough` names; `tool_isolation` turns their isolation off).
 */
export async function turnSandboxOf(runtime: HookRuntime, sessionId: string, workspace: string, config: (key: string) => unknown): Promise<Sandbox> {
  const answer = await runtime.callFirst("provideSandbox", { sessionId, workspace });
  if (answer === null || answer === undefined) return createHostSandbox({ workspace, envPassthrough: () => config("tool_env_passthrough"), isolation: () => config("tool_isolation") });
  if (typeof answer !== "object" || typeof answer.exec !== "function" || typeof answer.resolvePath !== "function") throw new TypeError("hook.provideSandbox must return a Sandbox or null");
  return answer;
}
