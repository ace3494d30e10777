/** Which channels a channel manager runs (the `BUB_ENABLED_CHANNELS` selection). */
import type { Channel } from "../kernel/types.ts";

/**
 * The channels `names` select, in the order of `channels`. Disabled channels never run.
 *
 * - `all`: every channel that is not an interface;
 * - a name: that channel; when at least one ordinary (not lifecycle) channel is named, every
 *   lifecycle channel is added;
 * - `!name`: never that channel.
 *
 * ```ts
 * selectChannels(channels, ["all", "!telegram"]);
 * ```
 */
export function selectChannels(channels: Iterable<Channel>, names: readonly string[]): Channel[] {
  const trimmed = names.map((name) => name.trim()).filter((name) => name !== "");
  const excluded = new Set(trimmed.filter((name) => name.startsWith("!")).map((name) => name.slice(1).trim()));
  const included = new Set(trimmed.filter((name) => !name.startsWith("!")));
  const usable = [...channels].filter((channel) => channel.enabled !== false && !excluded.has(channel.name));
  if (included.has("all")) return usable.filter((channel) => channel.kind !== "interface");
  const chosen = usable.filter((channel) => included.has(channel.name));
  if (!chosen.some((channel) => channel.kind !== "lifecycle")) return chosen;
  return [...chosen, ...usable.filter((channel) => channel.kind === "lifecycle" && !included.has(channel.name))];
}
