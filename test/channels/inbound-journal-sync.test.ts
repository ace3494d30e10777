/**
 * The inbound journal's group commit and its durability rule, seen through a file system
 * that counts its calls and can hold an fdatasync: a burst of appends costs one write and one
 * fdatasync per batch, a `done` nobody waits on rides on the next sync, and nothing is
 * acknowledged to Telegram (the next getUpdates offset, the webhook's 200) before its
 * `received` line is on disk.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { setImmediate as turn } from "node:timers/promises";
import type { Bot } from "grammy";
import type { Update } from "grammy/types";
import { InboundJournal, SYNC_SOON_MS } from "../../src/channels/inbound-journal.ts";
import { nodeJournalFiles, type JournalFile, type JournalFiles } from "../../src/channels/journal-files.ts";
import { DurableUpdates } from "../../src/channels/telegram/polling.ts";
import { startWebhookServer } from "../../src/channels/telegram/webhook.ts";
import { freePort } from "../support/ports.ts";
import { tempDir } from "../support/temp.ts";

/** The real file system, with every call recorded and fdatasyncs held while `hold` is on. */
class WatchedFiles implements JournalFiles {
  readonly calls: string[] = [];
  #held: PromiseWithResolvers<void> | null = null;
  #entered = Promise.withResolvers<void>();

  /** From now on, an fdatasync waits for {@link release}. */
  hold(): void {
    this.#held = Promise.withResolvers<void>();
    this.#entered = Promise.withResolvers<void>();
  }

  /** Resolves once an fdatasync is waiting. */
  entered(): Promise<void> {
    return this.#entered.promise;
  }

  release(): void {
    this.#held?.resolve();
    this.#held = null;
  }

  count(call: string): number {
    return this.calls.filter((name) => name === call).length;
  }

  async open(path: string, flags: "a" | "w", mode: number): Promise<JournalFile> {
    this.calls.push(`open ${flags}`);
    const file = await nodeJournalFiles.open(path, flags, mode);
    return {
      write: (buffer, offset) => {
        this.calls.push("write");
        return file.write(buffer, offset);
      },
      datasync: async () => {
        this.calls.push("datasync");
        const held = this.#held;
        if (held) {
          this.#entered.resolve();
          await held.promise;
        }
        await file.datasync();
      },
      close: () => file.close(),
    };
  }

  async rename(from: string, to: string): Promise<void> {
    this.calls.push("rename");
    await nodeJournalFiles.rename(from, to);
  }

  async syncDirectory(directory: string): Promise<void> {
    this.calls.push(`sync folder ${directory}`);
    await nodeJournalFiles.syncDirectory(directory);
  }
}

/** Whether `promise` has settled after the event loop turned once more. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await turn();
  await turn();
  return done;
}

function textUpdate(updateId: number): Update {
  return { update_id: updateId, message: { message_id: updateId, date: 0, chat: { id: 7, type: "private", first_name: "U" }, from: { id: 7, is_bot: false, first_name: "U" }, text: `m${updateId}` } };
}

describe("the inbound journal's group commit", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let path: string;
  let files: WatchedFiles;
  beforeEach(async () => {
    dir = await tempDir();
    path = join(dir.path, "inbound", "telegram-1.jsonl");
    files = new WatchedFiles();
  });
  afterEach(() => dir.cleanup());

  it("writes a burst of appends with one write and one fdatasync per batch", async () => {
    const journal = await InboundJournal.open(path, { files });
    files.calls.length = 0;
    files.hold();
    const first = journal.receive([{ id: 1, item: "a" }]);
    await files.entered();
    // While the first batch's fdatasync is under way, a burst arrives: it becomes the next batch.
    const burst = Array.from({ length: 50 }, (_, index) => journal.receive([{ id: index + 2, item: index }]));
    const started = journal.started([1]);
    files.release();
    await Promise.all([first, ...burst, started]);
    assert.deepEqual(files.calls, ["write", "datasync", "write", "datasync"]);
    const lines = (await readFile(path, "utf8")).split("\n").filter(Boolean);
    assert.equal(lines.length, 1 + 51 + 1, "the mark, 51 received lines and the started line");
    await journal.close();
  });

  it("resolves a receive only once its line is fdatasync'ed", async () => {
    const journal = await InboundJournal.open(path, { files });
    files.hold();
    const received = journal.receive([{ id: 1, item: "a" }]);
    await files.entered();
    assert.equal(await settled(received), false, "not acknowledged while the fdatasync is under way");
    files.release();
    assert.deepEqual(await received, [1]);
    await journal.close();
  });

  it("compacts asynchronously: new file written and synced, renamed, then the folder synced", async () => {
    const journal = await InboundJournal.open(path, { files, compactAfterLines: 2 });
    files.calls.length = 0;
    await journal.receive([{ id: 1, item: "a" }]);
    await journal.done([1]);
    await journal.flush();
    assert.deepEqual(files.calls, ["write", "datasync", "write", "datasync", "open w", "write", "datasync", "rename", `sync folder ${dirname(path)}`, "open a"]);
    assert.deepEqual((await readFile(path, "utf8")).split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { t: string }).t), ["mark"]);
    await journal.close();
  });

  it("writes a done its caller does not wait on without an fdatasync, and syncs it with the next record or soon after", async () => {
    const journal = await InboundJournal.open(path, { files });
    await journal.receive([{ id: 1, item: "a" }, { id: 2, item: "b" }]);
    files.calls.length = 0;
    await journal.done([1], false);
    assert.deepEqual(files.calls, ["write"], "written, not synced");
    // Nothing else asks for a sync: synced() makes one, SYNC_SOON_MS later.
    const alone = journal.synced();
    assert.equal(await settled(alone), false, "not on disk yet");
    await alone;
    assert.deepEqual(files.calls, ["write", "datasync"]);
    assert.equal(await settled(journal.synced()), true, "nothing written since: nothing to wait for");
    // A record that syncs anyway takes the done line with it: no sync of its own.
    files.calls.length = 0;
    await journal.done([2], false);
    const riding = journal.synced();
    await journal.receive([{ id: 3, item: "c" }]);
    assert.equal(await settled(riding), true, "on disk with the received line");
    await new Promise((resolve) => setTimeout(resolve, SYNC_SOON_MS * 3));
    assert.deepEqual(files.calls, ["write", "write", "datasync"], "one sync for both, and no later one");
    // Closing syncs what was written without a sync.
    await journal.done([3], false);
    files.calls.length = 0;
    await journal.close();
    assert.deepEqual(files.calls, ["datasync"]);
    const reopened = await InboundJournal.open(path);
    assert.deepEqual(reopened.pending(), [], "every done line was kept");
    await reopened.close();
  });

  it("keeps an open item's received line as written through compaction", async () => {
    const journal = await InboundJournal.open(path, { compactAfterLines: 1 });
    await journal.receive([{ id: 1, item: { text: "é", n: 1 } }]);
    const written = (await readFile(path, "utf8")).split("\n").find((line) => line.includes('"received"'));
    await journal.receive([{ id: 2, item: "b" }]);
    await journal.done([2]);
    await journal.close();
    const reopened = await InboundJournal.open(path, { compactAfterLines: 1 });
    const lines = (await readFile(path, "utf8")).split("\n").filter(Boolean);
    assert.equal(lines.length, 2, "compacted to the mark and the open item");
    assert.equal(lines[1], written);
    assert.deepEqual(reopened.pending().map((entry) => entry.item), [{ text: "é", n: 1 }]);
    await reopened.close();
  });
});

describe("acknowledgment waits for the journal's fdatasync", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let files: WatchedFiles;
  let durable: DurableUpdates;
  beforeEach(async () => {
    dir = await tempDir();
    files = new WatchedFiles();
    durable = new DurableUpdates(String);
    durable.attach(await InboundJournal.open(join(dir.path, "telegram-1.jsonl"), { files }));
  });
  afterEach(async () => {
    files.release();
    await durable.stop();
    await durable.closeJournal();
    await dir.cleanup();
  });

  it("polling asks for the next offset only once the update is on disk, and hands it over only then", async () => {
    const offsets: (number | undefined)[] = [];
    const handled: number[] = [];
    const secondPoll = Promise.withResolvers<void>();
    const stop = new AbortController();
    const bot = {
      api: {
        getUpdates: async (params: { offset?: number }, signal: AbortSignal) => {
          offsets.push(params.offset);
          if (offsets.length === 1) return [textUpdate(41)];
          secondPoll.resolve();
          await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
          throw new Error("aborted");
        },
      },
      handleUpdate: async (update: Update) => void handled.push(update.update_id),
    };
    files.hold();
    durable.startPolling(bot as unknown as Bot, stop.signal);
    await files.entered();
    await turn();
    assert.deepEqual(offsets, [undefined], "no getUpdates acknowledges update 41 before its fdatasync ended");
    assert.deepEqual(handled, []);
    files.release();
    await secondPoll.promise;
    assert.deepEqual(offsets, [undefined, 42]);
    assert.deepEqual(handled, [41]);
    stop.abort();
  });

  it("the webhook answers 200 only once the update is on disk", async () => {
    const handled: number[] = [];
    const bot = { handleUpdate: async (update: Update) => void handled.push(update.update_id) };
    const port = await freePort();
    const server = await startWebhookServer({ path: "/hook", host: "127.0.0.1", port, secret: "s", accept: (update) => durable.accept(bot as unknown as Bot, [update]) });
    try {
      files.hold();
      const response = fetch(`http://127.0.0.1:${port}/hook`, { method: "POST", headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s" }, body: JSON.stringify(textUpdate(7)) });
      await files.entered();
      assert.equal(await settled(response), false, "no answer while the fdatasync is under way");
      assert.deepEqual(handled, []);
      files.release();
      assert.equal((await response).status, 200);
      assert.deepEqual(handled, [7]);
    } finally {
      await server.close();
    }
  });
});
