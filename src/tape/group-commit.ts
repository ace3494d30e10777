import { fdatasync } from "node:fs";
import { promisify } from "node:util";

const datasync = promisify(fdatasync);

/**
 * Group commit for one open descriptor: every write gets a ticket, and `flush(ticket)` resolves
 * once an `fdatasync` that started after that write has finished. Writes that arrive while a
 * sync is running share the next one, so concurrent appends in one process pay for one sync.
 *
 * A failed sync fails every write made before the failure was seen, for good: after an fsync
 * error the kernel may have dropped those pages, so a later successful sync proves nothing.
 */
export interface GroupCommit {
  /** Records that a write has been made and returns its ticket. */
  noteWrite(): number;
  /** Resolves when the write with this ticket is on disk; rejects with the sync error otherwise. */
  flush(ticket: number): Promise<void>;
  /** Settles every write made so far (errors are left to their own `flush`), then resolves. */
  idle(): Promise<void>;
  /** True while a write is not yet synced or a sync is running. */
  readonly busy: boolean;
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

  async function flush(ticket: number): Promise<void> {
    while (synced < ticket) {
      if (failedUpTo >= ticket) throw failure;
      await (running ?? startSync());
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
