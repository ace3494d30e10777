/**
 * The builtin plugin's channel hooks, kept here so the plugin only delegates: the channels
 * it provides (Telegram), the in-memory steering inbox, and the admission default.
 */
import type { BubFramework } from "../kernel/framework.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import { builtinAdmission } from "./admission.ts";
import { createSteeringInbox } from "./steering.ts";
import { DeferredTelegramChannel } from "./telegram/deferred.ts";
import { telegramSettings } from "./telegram/settings.ts";
import { queueSettings } from "./cluster/settings.ts";

/**
 * `provideChannels`, `provideSteeringInbox` and `admitMessage` for the builtin plugin;
 * registers the `telegram` and `queue` settings sections. Nothing heavy is imported: the Telegram
 * channel's code (grammY among it) loads when the channel starts.
 */
export function createChannelHooks(framework: BubFramework): Pick<BubPlugin, "provideChannels" | "provideSteeringInbox" | "admitMessage"> {
  framework.settings.register(telegramSettings);
  framework.settings.register(queueSettings);
  return {
    provideChannels: ({ messageHandler }) => [new DeferredTelegramChannel(framework, { messageHandler })],
    provideSteeringInbox: () => createSteeringInbox(),
    admitMessage: (args) => builtinAdmission(framework, args),
  };
}
