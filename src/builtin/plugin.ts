import { createLogger } from "../kernel/log.ts";
import { describeError } from "../kernel/errors.ts";
import { currentCorrelation } from "../kernel/correlation.ts";
import { interruptSignalOf } from "../agent/interrupt.ts";
import { replyChannelOf } from "../kernel/envelope.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import type { BubFramework } from "../kernel/framework.ts";
import { ChannelMessage } from "../channels/message.ts";
import { createSteeringInbox } from "../channels/steering.ts";
import { DeferredTelegramChannel } from "../channels/telegram/deferred.ts";
import { telegramSettings } from "../channels/telegram/settings.ts";
import { queueSettings } from "../channels/cluster/settings.ts";
import { createDefaultTapeContext } from "../tape/context.ts";
import { AgentsFiles, agentsMaxBytes, builtinSystemPrompt } from "./system-prompt.ts";
import { registerBuiltinCommands } from "./commands/index.ts";
import { agentSettings, channelSettings, spillSettings } from "./settings.ts";
import { codexSettings } from "../llm/codex/settings.ts";
import { cliSettings } from "../channels/links/settings.ts";
import { linkedSession } from "../channels/links/session.ts";

const log = createLogger("bub:builtin");

/** onError stages the framework has logged before telling the observers. */
const LOGGED_STAGES = new Set(["turn", "save_state", "dispatch_outbound"]);

/** Options of {@link createBuiltinPlugin}. */
export interface BuiltinPluginOptions {
  /**
   * With the agent's hooks (state, prompt, the model loop, tools, model options, tape
   * sidecars: ./agent-plugin.ts, imported here); default true. `bub` leaves them out of the
   * commands that run no turn, so `bub --help` never loads the model layer.
   */
  agent?: boolean;
}

/**
 * The builtin plugin: registered first, so every other plugin can replace any of its hooks.
 * It registers the builtin settings sections when created; with the agent (the default) it
 * imports the agent's module once, here, and answers the agent's hooks itself.
 */
export async function createBuiltinPlugin(framework: BubFramework, options: BuiltinPluginOptions = {}): Promise<BubPlugin> {
  for (const section of [agentSettings, channelSettings, spillSettings, codexSettings, cliSettings, telegramSettings, queueSettings]) framework.settings.register(section);
  const agent = options.agent === false ? null : (await import("./agent-plugin.ts")).createBuiltinAgent(framework);
  const agentsFiles = new AgentsFiles({ maxBytes: () => agentsMaxBytes(framework.settings.getValue("agents_max_bytes", undefined)) });

  return {
    name: "builtin",
    ...agent,

    async loadState(args) {
      // AGENTS.md is read here, off the event loop, for the synchronous systemPrompt hook below.
      await agentsFiles.refresh(framework.workspace);
      return agent?.loadState(args);
    },

    provideTapeStore() {
      return (async function* () {
        const { createTapeStoreFromSettings } = await import("../tape/store-from-settings.ts");
        const settings = await framework.settings.load(channelSettings);
        const store = createTapeStoreFromSettings({ kind: settings.tape_store, home: framework.home, dsn: settings.tape_dsn, databaseUrl: settings.database_url });
        try {
          yield store;
        } finally {
          await store.close?.();
        }
      })();
    },

    buildTapeContext: () => createDefaultTapeContext(),
    // Telegram's code (grammY among it) loads when the channel starts.
    provideChannels: ({ messageHandler }) => [new DeferredTelegramChannel(framework, { messageHandler })],
    provideSteeringInbox: () => createSteeringInbox(),

    async resolveSession({ message }) {
      // A linked person's private chats share one session where the channel allows it (issue 36).
      const linked = await linkedSession(framework, message);
      if (linked !== null) return linked;
      if (message.sessionId !== undefined && message.sessionId.trim() !== "") return message.sessionId;
      return `${message.channel || "default"}:${message.chatId || "default"}`;
    },

    renderOutbound({ message, sessionId, modelOutput, context }) {
      return new ChannelMessage({
        sessionId,
        channel: message.channel || "default",
        chatId: message.chatId || "default",
        content: modelOutput,
        // Replies go back where the inbound came from (the reference says "default", which no channel takes).
        outputChannel: replyChannelOf(message) ?? "default",
        // A failed comma command answers with an error outbound (§15.7).
        kind: context.commandFailed ? "error" : message.kind,
      });
    },

    // Delivery is the running channel's (a channel manager's, `bub run`'s): the builtin only logs.
    dispatchOutbound({ message }) {
      // At debug: the reply's text does not belong in a log file kept at the default level.
      if (message.outputChannel !== "cli") log.debug(`session.run.outbound session_id=${message.sessionId ?? "?"} content=${JSON.stringify(message.content)}`);
      return undefined;
    },

    async onError({ stage, error, message, context }) {
      if (message === null || message === undefined) return;
      // A turn a signal interrupted is reported once, by the command that got the signal.
      if (interruptSignalOf(error) !== null) return;
      const sessionId = message.sessionId || "unknown";
      // The framework logged these already: a failure the turn threw, and failing saveState / dispatchOutbound hooks.
      if (!LOGGED_STAGES.has(stage)) log.error(`turn.error stage=${stage} session_id=${sessionId} turn_id=${currentCorrelation()?.turnId ?? "-"}`, error);
      const outbound = new ChannelMessage({
        sessionId,
        channel: message.channel || "default",
        chatId: message.chatId || "default",
        content: `An error occurred at stage '${stage}': ${describeError(error)}`,
        kind: "error",
        // The error itself, for a command that prints it (`bub run`: one stderr line, causes with --verbose).
        context: { _error: error },
      });
      // A plugin's failing dispatchOutbound must not keep the error from the builtin's.
      for (const failure of await framework.runtime.call("dispatchOutbound", context ? { message: outbound, context } : { message: outbound })) log.warn(`turn.error_undelivered stage=${stage} session_id=${sessionId} turn_id=${currentCorrelation()?.turnId ?? "-"}`, failure);
    },

    systemPrompt() {
      return builtinSystemPrompt(framework.workspace, agentsFiles);
    },

    registerCliCommands({ app, command }) {
      registerBuiltinCommands(app, framework, command);
      return undefined;
    },
  };
}
