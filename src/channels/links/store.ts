/**
 * Where identity links are kept: `<BUB_HOME>/links.json` (mode 0600), changed under a
 * cross-process lock (`links.lock`) and replaced by an atomic rename, so `bub link` in a
 * terminal and a running gateway can both use it. Reads are cached by the file's size and
 * modification time, so looking a sender up per message is one `stat`.
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

/** The links of one home folder. */
export interface LinkStore {
  /** The person `identity` is linked into, or null. */
  personOf(identity: string): Promise<LinkedPerson | null>;
  /** Every linked person. */
  list(): Promise<readonly LinkedPerson[]>;
  /** Runs `change` on the current state under the lock and saves what it leaves. */
  update<T>(change: (state: LinkState) => T): Promise<T>;
}

/** The {@link LinkStore} of the home folder `home`. */
export function createLinkStore(home: string): LinkStore {
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
    const parsed = stateSchema.safeParse(JSON.parse(await readFile(path, "utf8")));
    if (!parsed.success) throw new BubError("invalid_input", `${path} is not a links file bub can read: fix or remove it (bub link list shows the links).`);
    cached = { key, state: parsed.data };
    return parsed.data;
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
      return lock.run(async () => {
        const state = structuredClone(await read());
        const result = change(state);
        const temporary = `${path}.${process.pid}.tmp`;
        await writeFile(temporary, `${JSON.stringify(state)}\n`, { mode: PRIVATE_FILE_MODE, flush: true });
        await rename(temporary, path);
        await syncDirectory(home);
        cached = null;
        return result;
      });
    },
  };
}
