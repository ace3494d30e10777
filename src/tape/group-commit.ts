import { fdatasync, fdatasyncSync } from "node:fs";

/**
 * Group commit for one open descriptor: every write gets a ticket, and `flush(ticket)` resolves
 * once an `fdatasync` that started after that write has finished. Writes that arrive while a
 * sync is running share the next one, so concurrent appends in one process pay for one sync.
 *
 * A lone writer may ask for an *inline* sync: `fdatasync` on the main thread, which saves the
 * thread-pool round trip (about a quarter of the cost of a small append on an SSD) at the price
 * of blocking the event loop for the sync; writes made before it still share it.
 *
 * A failed sync fails every write made before the failure was seen, for good: after an fsync
 * error the kernel may have dropped those pages, so a later successful sync proves nothing.
 */
export interface GroupCommit {
  /** Records that a write has been made and returns its ticket. */
  noteWrite(): number;
  /**
   * Resolves when the write with this ticket is on disk; rejects with the sync error otherwise.
   * With `inline`, a needed sync that no running sync covers is done on the main thread.
   */
  flush(ticket: number, options?: { inline?: boolean }): Promise<void>;
  /** Settles every write made so far (errors are left to their own `flush`), then resolves. */
  idle(): Promise<void>;
  /** True while a write is not yet synced or a sync is running. */
  readonly busy: boolean;
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

/** A {@link GroupCommit} for descriptor `fd`; close `fd` only after {@link GroupCommit.idle}. */
export function createGroupCommit(fd: number): GroupCommit {
  let written = 0;
  let synced = 0;
  let failedUpTo = 0;
  let failure: unknown = null;
  let running: Promise<void> | null = null;

  function startSync(): Promise<void> {
    const upTo = written;
    running = datasync(fd)
      .then(
        () => {
          synced = Math.max(synced, upTo);
        },
        (error: unknown) => {
          failedUpTo = Math.max(failedUpTo, written);
          failure = error;
        },
      )
      .finally(() => {
        running = null;
      });
    return running;
  }

  function syncInline(): void {
    const upTo = written;
    try {
      fdatasyncSync(fd);
      synced = Math.max(synced, upTo);
    } catch (error) {
      failedUpTo = Math.max(failedUpTo, written);
      failure = error;
    }
  }

  async function flush(ticket: number, options: { inline?: boolean } = {}): Promise<void> {
    while (synced < ticket) {
      if (failedUpTo >= ticket) throw failure;
      if (!running && options.inline) syncInline();
      else await (running ?? startSync());
    }
  }

  return {
    noteWrite: () => ++written,
    flush,
    async idle() {
      await flush(written).catch(() => undefined);
      while (running) await running;
    },
    get busy() {
      return running !== null || Math.max(synced, failedUpTo) < written;
    },
  };
}
