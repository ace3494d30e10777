/**
 * Live updates without touching the writers: a poller per watched thing (a tape, the sessions
 * list) reads a cheap fingerprint through the store while at least one page listens, and
 * tells each listener when the fingerprint differs from the one it last saw. One poll serves
 * every open page; polling stops when the last page goes away.
 */
import { createLogger } from "../kernel/log.ts";
import { describeError } from "../kernel/errors.ts";

const log = createLogger("bub:ui");

/** Called with the new fingerprint. */
export type ChangeListener = (fingerprint: string) => void;

/** The pollers of one web view. */
export interface ChangeWatch {
  /**
   * Listens for changes of `key`, whose fingerprint `read` computes; `seen` is the
   * fingerprint the page already shows (a change before the first poll is reported too).
   * Returns the function that stops listening.
   */
  subscribe(key: string, read: () => Promise<string>, seen: string | null, listener: ChangeListener): () => void;
  /** Stops every poller. */
  close(): void;
}

interface Poller {
  readonly listeners: Map<ChangeListener, string | null>;
  timer: NodeJS.Timeout | null;
  read: () => Promise<string>;
}

/** Pollers that read every `intervalMs` (default 1000). */
export function createChangeWatch(intervalMs = 1000): ChangeWatch {
  const pollers = new Map<string, Poller>();
  let closed = false;

  async function poll(key: string, poller: Poller): Promise<void> {
    poller.timer = null;
    if (poller.listeners.size === 0 || closed) return;
    try {
      const fingerprint = await poller.read();
      for (const [listener, seen] of poller.listeners) {
        if (seen === fingerprint) continue;
        poller.listeners.set(listener, fingerprint);
        listener(fingerprint);
      }
    } catch (error) {
      log.debug(`live update of ${key} failed: ${describeError(error)}`);
    }
    if (poller.listeners.size > 0 && !closed && pollers.get(key) === poller) poller.timer = setTimeout(() => void poll(key, poller), intervalMs);
    else if (pollers.get(key) === poller && poller.listeners.size === 0) pollers.delete(key);
  }

  return {
    subscribe(key, read, seen, listener) {
      let poller = pollers.get(key);
      if (!poller) {
        poller = { listeners: new Map(), timer: null, read };
        pollers.set(key, poller);
        const started = poller;
        started.timer = setTimeout(() => void poll(key, started), 0);
      }
      poller.listeners.set(listener, seen);
      const owner = poller;
      return () => {
        owner.listeners.delete(listener);
        if (owner.listeners.size === 0) {
          if (owner.timer) clearTimeout(owner.timer);
          owner.timer = null;
          if (pollers.get(key) === owner) pollers.delete(key);
        }
      };
    },
    close() {
      closed = true;
      for (const poller of pollers.values()) if (poller.timer) clearTimeout(poller.timer);
      pollers.clear();
    },
  };
}
