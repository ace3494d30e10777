/**
 * Where identity links are kept. {@link LinkStore} is the one interface; the implementation
 * follows the configured storage ({@link ./store-from-settings.ts}): `<BUB_HOME>/links.json`
 * here, a row of the SQLite database (./sqlite-store.ts) or of a PostgreSQL table shared by
 * every gateway on the database (./postgres-store.ts).
 *
 * The file (mode 0600) is changed under a cross-process lock (`links.lock`) and replaced by an
 * atomic rename, so `bub link` in a terminal and a running gateway can both use it. Reads are
 * cached by the file's size and modification time, so looking a sender up per message is one
 * `stat`.
 */
import { readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import { makeDirectoryAsync, PRIVATE_FILE_MODE, syncDirectory } from "../../config/home-dir.ts";
import { createProcessLock, type ProcessLock } from "../../tape/process-lock.ts";
import { emptyLinkState, personOf, type LinkedPerson, type LinkState } from "./codes.ts";

const stateSchema = z.object({
  people: z.array(z.object({ id: z.string(), identities: z.array(z.string()), created: z.string() })).default([]),
  codes: z.array(z.object({ hash: z.string(), identity: z.string(), expires: z.number() })).default([]),
  issued: z.record(z.string(), z.array(z.number())).default({}),
  failures: z.record(z.string(), z.array(z.number())).default({}),
});

/** The links of one installation (a home folder, a SQLite file or a PostgreSQL database). */
export interface LinkStore {
  /** The person `identity` is linked into, or null. */
  personOf(identity: string): Promise<LinkedPerson | null>;
  /** Every linked person. */
  list(): Promise<readonly LinkedPerson[]>;
  /**
   * Runs `change` on the current state, atomically against other processes, and saves what
   * it leaves, also when it throws (a wrong code is counted by the rule that refuses it);
   * then answers its result or rethrows.
   */
  update<T>(change: (state: LinkState) => T): Promise<T>;
  /** Lets go of the database connection, if any (the store reopens it when used again). */
  close(): Promise<void>;
}

/**
 * Parses stored link state (JSON text or a decoded value); `where` names the storage in the error.
 * @throws BubError `invalid_input` when it is not link state.
 */
export function parseLinkState(stored: unknown, where: string): LinkState {
  let value = stored;
  try {
    if (typeof stored === "string") value = JSON.parse(stored);
  } catch {
    value = undefined;
  }
  const parsed = stateSchema.safeParse(value);
  if (!parsed.success) throw new BubError("invalid_input", `${where} holds links bub cannot read: fix or remove them (bub link list shows the links).`);
  return parsed.data;
}

/** Runs `change` on `state` and says whether it threw, so that a store saves the state either way. */
export function applyChange<T>(state: LinkState, change: (state: LinkState) => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: change(state) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The result of {@link applyChange}, or its error thrown. */
export function settle<T>(outcome: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** The {@link LinkStore} in the file `<home>/links.json`. */
export function createFileLinkStore(home: string): LinkStore {
  const path = join(home, "links.json");
  let lock: ProcessLock | null = null;
  let cached: { key: string; state: LinkState } | null = null;

  async function read(): Promise<LinkState> {
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
    if (!info) return emptyLinkState();
    const key = `${info.size}:${info.mtimeMs}`;
    if (cached?.key === key) return cached.state;
    const state = parseLinkState(await readFile(path, "utf8"), path);
    cached = { key, state };
    return state;
  }

  return {
    async personOf(identity) {
      return personOf(await read(), identity);
    },
    async list() {
      return (await read()).people;
    },
    async update(change) {
      await makeDirectoryAsync(home);
      lock ??= createProcessLock(join(home, "links.lock"));
      const outcome = await lock.run(async () => {
        const state = structuredClone(await read());
        const result = applyChange(state, change);
        const temporary = `${path}.${process.pid}.tmp`;
        await writeFile(temporary, `${JSON.stringify(state)}\n`, { mode: PRIVATE_FILE_MODE, flush: true });
        await rename(temporary, path);
        await syncDirectory(home);
        cached = null;
        return result;
      });
      return settle(outcome);
    },
    async close() {},
  };
}
