import { defineSettings, type SettingsOf } from "../config/settings.ts";
import type { agentSchema, channelSchema, spillSchema } from "./schemas.ts";

/** Resolved agent settings. */
export type AgentSettings = SettingsOf<typeof agentSchema>;
/** Resolved channel and storage settings. */
export type ChannelSettings = SettingsOf<typeof channelSchema>;
/** Resolved spill settings. */
export type SpillSettings = SettingsOf<typeof spillSchema>;

/** `BUB_<PROVIDER>_API_KEY` / `_API_BASE` variables as provider → value maps. */
export function providerScopedEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const scoped: Record<string, Record<string, string>> = {};
  for (const [name, value] of Object.entries(env)) {
    const match = /^BUB_(.+)_API_(KEY|BASE)$/.exec(name);
    if (!match || value === undefined || value === "") continue;
    const field = match[2] === "KEY" ? "api_key" : "api_base";
    (scoped[field] ??= {})[match[1].toLowerCase()] = value;
  }
  return scoped;
}

/** The builtin settings sections; their schemas load only when first resolved. */
export const agentSettings = defineSettings<typeof agentSchema>({
  id: "agent",
  section: null,
  schema: async () => (await import("./schemas.ts")).agentSchema,
  fromEnv: providerScopedEnv,
});

export const channelSettings = defineSettings<typeof channelSchema>({
  id: "channels",
  section: null,
  schema: async () => (await import("./schemas.ts")).channelSchema,
});

export const spillSettings = defineSettings<typeof spillSchema>({
  id: "spill",
  section: "spill",
  schema: async () => (await import("./schemas.ts")).spillSchema,
});
