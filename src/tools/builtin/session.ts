/** Session commands: `help`, `quit`, `model`, `reasoning_effort` (not offered to the model). */
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import type { TurnState } from "../../kernel/types.ts";
import type { ModelCheck } from "../runtime-agent.ts";
import type { RuntimeAgent } from "../runtime-agent.ts";
import { closestToolNames } from "../suggest.ts";
import { defineTool, type Tool } from "../tool.ts";
import { tapeOf } from "./context.ts";
import type { ShellManager } from "./shell-manager.ts";

/** What `,help` prints. */
export const COMMAND_HELP_TEXT = [
  "Commands use ',' at line start.",
  "Known internal commands:",
  "  ,help",
  "  ,skill name=foo",
  "  ,tape.info",
  "  ,tape.search query=error",
  "  ,tape.handoff name=phase-1 summary='done'",
  "  ,tape.anchors",
  "  ,model",
  "  ,model openai:gpt-4o-mini",
  "  ,fs.read path=README.md",
  "  ,fs.write path=tmp.txt content='hello'",
  "  ,fs.edit path=tmp.txt old=hello new=world",
  "  ,bash cmd='sleep 5' background=true",
  "  ,bash.output shell_id=bash-12345678",
  "  ,bash.kill shell_id=bash-12345678",
  "  ,quit",
  "Any unknown command after ',' is executed as shell via bash.",
].join("\n");

/** `,help` with the agent's tools: the examples, then every tool by name with the first sentence of its description. */
function helpText(tools: readonly Tool[]): string {
  if (tools.length === 0) return COMMAND_HELP_TEXT;
  const lines = COMMAND_HELP_TEXT.split("\n");
  const last = lines.pop() ?? "";
  const sorted = [...tools].sort((a, b) => a.name.localeCompare(b.name));
  const width = Math.max(...sorted.map((tool) => tool.name.length));
  const summary = (text: string) => /^[^\n]*?[.!?](?=\s|$)|^[^\n]*/.exec(text.trim())?.[0] ?? "";
  return [...lines, "Every command (,<name> key=value ...):", ...sorted.map((tool) => `  ${tool.name.padEnd(width)}  ${summary(tool.description)}`), last].join("\n");
}

/**
 * What `,model` without an id says: the model in use, the configured fallbacks, and the
 * models the plugins offer for the session (`provideModelOptions`), the current one marked.
 */
async function describeModels(state: TurnState, agent: RuntimeAgent | null): Promise<string> {
  const choice = agent?.modelChoice ? await agent.modelChoice(state) : null;
  const current = choice?.model ?? state.model ?? "(the configured default)";
  const fallbacks = choice && choice.fallbacks.length > 0 ? choice.fallbacks.join(", ") : "none";
  const sessionId = state.session_id ?? null;
  const offered = sessionId && agent?.modelOptions ? (await agent.modelOptions(sessionId)).models : [];
  const lines = [`Current model: ${current}`, `Fallback models: ${fallbacks}`];
  if (offered.length > 0) lines.push("Models offered:", ...offered.map((choice) => `  ${choice.id === current ? "*" : "-"} ${choice.id}${choice.name && choice.name !== choice.id ? ` (${choice.name})` : ""}`));
  lines.push("Switch with ,model <provider:model>; `bub models <provider>` lists what a provider offers.");
  return lines.join("\n");
}

/** One line for a model its provider does not list, with the closest listed names. */
function unknownModelText(check: Extract<ModelCheck, { status: "unknown_model" }>): string {
  const close = closestToolNames(check.model, check.available, 3).map((name) => `${check.provider}:${name}`);
  return `Unknown model '${check.model}' for provider '${check.provider}'; did you mean ${close.join(", ")}? The session model is unchanged (\`bub models ${check.provider}\` lists all ${check.available.length}).`;
}

/** The session command tools; `quit` stops the session's shells in `shells`. */
export function sessionTools(shells: ShellManager): Tool[] {
  const help = defineTool({
    name: "help",
    description: "Show the comma commands.",
    context: true,
    agentUse: false,
    run: (_args, { agent }) => helpText(agent?.tools.list() ?? []),
  });

  const quit = defineTool({
    name: "quit",
    description: "Stop the running tasks and background shells of this session.",
    context: true,
    agentUse: false,
    async run(_args, { state, agent, turn }) {
      const sessionId = state.session_id ?? "temp/unknown";
      await shells.terminateSession(sessionId);
      await agent?.quitSession(sessionId, turn);
      return "Session tasks stopped.";
    },
  });

  const model = defineTool({
    name: "model",
    description: "Switch this session's model (provider:model) from the next turn on, after checking it; kept across restarts. Without an id, show the current model and the fallbacks.",
    parameters: () => z.object({ model_id: z.string().trim().optional().describe("A provider:model id, e.g. openrouter:openrouter/free; empty shows the current model.") }),
    context: true,
    agentUse: false,
    async run({ model_id }, context) {
      const { agent } = context;
      if (!model_id) return describeModels(context.state, agent ?? null);
      const check = agent?.checkModel ? await agent.checkModel(model_id, context.signal) : null;
      if (check?.status === "invalid") throw new BubError("invalid_input", `${check.message} The session model is unchanged.`);
      if (check?.status === "unknown_model") throw new BubError("invalid_input", unknownModelText(check));
      const id = check?.id ?? model_id;
      const tape = tapeOf(context);
      context.state.model = id;
      await tape.appendEvent("model_switch", { model: id });
      const note = check?.status === "ok" && check.note ? ` (${check.note})` : "";
      return `Session model set to ${id} (applies from the next turn).${note}`;
    },
  });

  const reasoningEffort = defineTool({
    name: "reasoning_effort",
    description: "Set this session's reasoning effort (e.g. low, medium, high) from the next turn on.",
    parameters: () => z.object({ reasoning_effort: z.string().describe("The effort level the provider understands.") }),
    context: true,
    agentUse: false,
    async run({ reasoning_effort }, context) {
      const value = reasoning_effort.trim();
      if (!value) throw new BubError("invalid_input", "reasoning_effort must not be empty");
      const tape = tapeOf(context);
      context.state.reasoning_effort = value;
      await tape.appendEvent("reasoning_effort_switch", { reasoning_effort: value });
      return `Session reasoning effort set to ${value} (applies from the next turn).`;
    },
  });

  return [help, quit, model, reasoningEffort];
}
