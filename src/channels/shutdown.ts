/** The end of a channel manager's run: the grace period for running turns, then stopping the channels. */
import { createLogger } from "../kernel/log.ts";
import type { Channel } from "../kernel/types.ts";

const log = createLogger("bub:channels");

/** Waits for `idle` for up to `graceMs`; resolves true when the grace period ran out first. */
export async function graceExpired(idle: Promise<void>, graceMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), graceMs);
  });
  try {
    return await Promise.race([idle.then(() => false), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Stops each channel in turn, in the given order; a channel that fails to stop is logged and the others still stop. */
export async function stopChannels(channels: readonly Channel[]): Promise<void> {
  for (const channel of channels) {
    try {
      await channel.stop();
    } catch (error) {
      log.error(`channel.manager failed to stop channel '${channel.name}'`, error);
    }
  }
}
