/** Session commands: `help`, `quit`, `model`, `reasoning_effort` (not offered to the model). */
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import { runtimeAgentOf } from "../runtime-agent.ts";
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
  "  ,fs.read path=README.md",
  "  ,fs.write path=tmp.txt content='hello'",
  "  ,fs.edit path=tmp.txt old=hello new=world",
  "  ,bash cmd='sleep 5' background=true",
  "  ,bash.output shell_id=bash-12345678",
  "  ,bash.kill shell_id=bash-12345678",
  "  ,quit",
  "Any unknown command after ',' is executed as shell via bash.",
].join("\n");

/** The session command tools; `quit` stops the session's shells in `shells`. */
export function sessionTools(shells: ShellManager): Tool[] {
  const help = defineTool({
    name: "help",
    description: "Show the comma commands.",
    agentUse: false,
    run: () => COMMAND_HELP_TEXT,
  });

  const quit = defineTool({
    name: "quit",
    description: "Stop the running tasks and background shells of this session.",
    context: true,
    agentUse: false,
    async run(_args, { state }) {
      const sessionId = typeof state.session_id === "string" ? state.session_id : "temp/unknown";
      await shells.terminateSession(sessionId);
      await runtimeAgentOf(state)?.quitSession(sessionId);
      return "Session tasks stopped.";
    },
  });

  const model = defineTool({
    name: "model",
    description: "Switch this session's model (provider:model) from the next turn on; kept across restarts.",
    parameters: () => z.object({ model_id: z.string().trim().min(1).describe("A provider:model id, e.g. openrouter:openrouter/free.") }),
    context: true,
    agentUse: false,
    async run({ model_id }, context) {
      const tape = tapeOf(context);
      context.state.model = model_id;
      await tape.appendEvent("model_switch", { model: model_id });
      return `Session model set to ${model_id} (applies from the next turn).`;
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
