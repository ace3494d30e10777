import { createLogger } from "../kernel/log.ts";
import { describeError } from "../kernel/errors.ts";
import { currentCorrelation } from "../kernel/correlation.ts";
import { interruptSignalOf } from "../agent/interrupt.ts";
import { fieldOf } from "../kernel/envelope.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import type { BubFramework } from "../kernel/framework.ts";
import { ChannelMessage } from "../channels/message.ts";
import { createChannelHooks } from "../channels/builtin-hooks.ts";
import { AgentsFiles, builtinSystemPrompt } from "./system-prompt.ts";
import { registerBuiltinCommands } from "./commands/index.ts";
import { createLazyAgentHooks } from "./lazy-agent.ts";
import { agentSettings, channelSettings, spillSettings } from "./settings.ts";
import { codexSettings } from "../llm/codex/settings.ts";

const log = createLogger("bub:builtin");

/** onError stages the framework has logged before telling the observers. */
const LOGGED_STAGES = new Set(["turn", "save_state", "dispatch_outbound"]);

function text(value: unknown, fallback: string): string {
  return value === undefined || value === null || value === "" ? fallback : String(value);
}

/**
 * The builtin plugin: registered first, so every other plugin can replace any of its hooks.
 * It registers the builtin settings sections when created.
 */
export function createBuiltinPlugin(framework: BubFramework): BubPlugin {
  for (const section of [agentSettings, channelSettings, spillSettings, codexSettings]) framework.settings.register(section);
  const agentHooks = createLazyAgentHooks(framework);
  const agentsFiles = new AgentsFiles();

  return {
    name: "builtin",
    ...agentHooks,
    ...createChannelHooks(framework),

    async loadState(args) {
      // AGENTS.md is read here, off the event loop, for the synchronous systemPrompt hook below.
      await agentsFiles.refresh(framework.workspace);
      return agentHooks.loadState!(args);
    },

    resolveSession({ message }) {
      const own = fieldOf(message, "session_id");
      if (typeof own === "string" && own.trim() !== "") return own;
      return `${text(fieldOf(message, "channel"), "default")}:${text(fieldOf(message, "chat_id"), "default")}`;
    },

    renderOutbound({ message, sessionId, state, modelOutput }) {
      return new ChannelMessage({
        sessionId,
        channel: text(fieldOf(message, "channel"), "default"),
        chatId: text(fieldOf(message, "chat_id"), "default"),
        content: modelOutput,
        // Replies go back where the inbound came from (the reference says "default", which no channel takes).
        outputChannel: text(fieldOf(message, "output_channel"), text(fieldOf(message, "channel"), "default")),
        // A failed comma command answers with an error outbound (§15.7).
        kind: state._runtime_command_failed === true ? "error" : (text(fieldOf(message, "kind"), "normal") as ChannelMessage["kind"]),
      });
    },

    async dispatchOutbound({ message }) {
      if (fieldOf(message, "output_channel") !== "cli") {
        // At debug: the reply's text does not belong in a log file kept at the default level.
        log.debug(`session.run.outbound session_id=${String(fieldOf(message, "session_id"))} content=${JSON.stringify(fieldOf(message, "content") ?? "")}`);
      }
      return framework.dispatchViaChannelRouter(message);
    },

    async onError({ stage, error, message }) {
      if (message === null || message === undefined) return;
      // A turn a signal interrupted is reported once, by the command that got the signal.
      if (interruptSignalOf(error) !== null) return;
      const sessionId = text(fieldOf(message, "session_id"), "unknown");
      // The framework logged these already: a failure the turn threw, and failing saveState / dispatchOutbound hooks.
      if (!LOGGED_STAGES.has(stage)) log.error(`turn.error stage=${stage} session_id=${sessionId} turn_id=${currentCorrelation()?.turnId ?? "-"}`, error);
      const outbound = new ChannelMessage({
        sessionId,
        channel: text(fieldOf(message, "channel"), "default"),
        chatId: text(fieldOf(message, "chat_id"), "default"),
        content: `An error occurred at stage '${stage}': ${describeError(error)}`,
        kind: "error",
        // The error itself, for a command that prints it (`bub run`: one stderr line, causes with --verbose).
        context: { _error: error },
      });
      // A plugin's failing dispatchOutbound must not keep the error from the builtin's.
      for (const failure of await framework.runtime.callEachSettled("dispatchOutbound", { message: outbound })) log.warn(`turn.error_undelivered stage=${stage} session_id=${sessionId} turn_id=${currentCorrelation()?.turnId ?? "-"}`, failure);
    },

    systemPrompt({ state }) {
      const workspace = typeof state._runtime_workspace === "string" && state._runtime_workspace.trim() ? state._runtime_workspace : process.cwd();
      return builtinSystemPrompt(workspace, agentsFiles);
    },

    registerCliCommands({ app, command }) {
      registerBuiltinCommands(app, framework, command);
      return undefined;
    },
  };
}
