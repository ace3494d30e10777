/**
 * Archiving and resetting a session tape together with its sidecars (reference §9.7).
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { makeDirectoryAsync, PRIVATE_FILE_MODE } from "../config/home-dir.ts";
import { join } from "node:path";
import { describeError } from "../kernel/errors.ts";
import type { TapeStore } from "../kernel/tape-contract.ts";
import { archiveStamp } from "./date.ts";
import { fileStoreError } from "./store-errors.ts";
import { errorCode } from "../config/thrown.ts";

/** What a sidecar lifecycle event (`sidecar.archive`, `sidecar.reset`) records. */
export interface SidecarLifecycle {
  sidecar: string;
  status: "ok" | "error" | "skipped";
  reason: string;
  archive?: string;
  error?: string;
  cause?: string;
  [key: string]: unknown;
}

/** A fresh archive stamp (`YYYYMMDDTHHMMSSZ`, UTC). */
export function newArchiveStamp(): string {
  return archiveStamp();
}

/**
 * Writes every entry of `tape` to `<archivePath>/<tape>.jsonl.<stamp>.bak`, one JSON line each,
 * synced to disk. An existing archive is never overwritten: a second archive within the same
 * second gets `-1`, `-2`, ... after the stamp. Returns the archive's path.
 */
export async function archiveTape(store: TapeStore, tape: string, archivePath: string, stamp: string): Promise<string> {
  const found = await store.fetchAll({ tape });
  await makeDirectoryAsync(archivePath).catch((error: unknown) => {
    throw fileStoreError(error, "create the archive directory for", archivePath);
  });
  const text = found.map((entry) => `${JSON.stringify(entry)}\n`).join("");
  for (let attempt = 0; ; attempt++) {
    const path = join(archivePath, `${tape}.jsonl.${stamp}${attempt === 0 ? "" : `-${attempt}`}.bak`);
    let handle;
    try {
      handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
    } catch (error) {
      if (errorCode(error) === "EEXIST") continue;
      throw fileStoreError(error, "create the archive", path);
    }
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } catch (error) {
      throw fileStoreError(error, "write the archive", path);
    } finally {
      await handle.close();
    }
    return path;
  }
}

/** The event data of one sidecar lifecycle step. */
export function lifecycle(
  sidecar: string,
  status: SidecarLifecycle["status"],
  reason: string,
  extra: { archive?: string; error?: unknown; cause?: string } = {},
): SidecarLifecycle {
  const data: SidecarLifecycle = { sidecar, status, reason };
  if (extra.archive !== undefined) data.archive = extra.archive;
  if (extra.error !== undefined) data.error = describeError(extra.error);
  if (extra.cause !== undefined) data.cause = extra.cause;
  return data;
}

/** Archives one sidecar tape, capturing failure as lifecycle data instead of throwing. */
export async function tryArchive(
  store: TapeStore,
  sidecar: string,
  tape: string,
  archivePath: string,
  reason: string,
  stamp: string,
): Promise<{ path: string | null; data: SidecarLifecycle }> {
  try {
    const path = await archiveTape(store, tape, archivePath, stamp);
    return { path, data: lifecycle(sidecar, "ok", reason, { archive: path }) };
  } catch (error) {
    return { path: null, data: lifecycle(sidecar, "error", reason, { error }) };
  }
}

/** Resets one sidecar tape, capturing failure as lifecycle data instead of throwing. */
export async function tryReset(store: TapeStore, sidecar: string, tape: string, reason: string): Promise<SidecarLifecycle> {
  try {
    await store.reset(tape);
    return lifecycle(sidecar, "ok", reason);
  } catch (error) {
    return lifecycle(sidecar, "error", reason, { error });
  }
}
