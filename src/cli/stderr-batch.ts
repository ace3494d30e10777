/**
 * Lines for stderr gathered for a few milliseconds and written together. A pipe on Linux is
 * written synchronously by Node, so a gateway that shows one line per message in and one per
 * reply out would otherwise block its event loop on a `write` for each of them; gathered, a
 * burst of messages costs one `write` per interval. Order is kept (everything written to
 * stderr through the batch goes in one queue); `flush` writes at once, and the process's
 * `exit` flushes what is still gathered.
 */
import type { ExitEvents } from "./logging.ts";

/** A writer whose text reaches `target` at most `delayMs` later, in the order written. */
export interface StderrBatch {
  write(text: string): void;
  /** Writes everything gathered now. */
  flush(): void;
  /** Flushes and stops listening for the process's exit. */
  close(): void;
}

/** Gathers what is written for `delayMs` (default 20 ms) before one write to `target`. */
export function stderrBatch(target: { write(text: string): unknown }, options: { delayMs?: number; exitEvents?: ExitEvents } = {}): StderrBatch {
  const delayMs = Math.max(1, options.delayMs ?? 20);
  const exitEvents = options.exitEvents ?? process;
  let gathered: string[] = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (gathered.length === 0) return;
    const text = gathered.join("");
    gathered = [];
    target.write(text);
  };
  exitEvents.on("exit", flush);
  return {
    write(text) {
      if (text === "") return;
      gathered.push(text);
      timer ??= setTimeout(flush, delayMs).unref();
    },
    flush,
    close() {
      exitEvents.off("exit", flush);
      flush();
    },
  };
}
