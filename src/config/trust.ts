/**
 * Workspace trust: which folders may run their own code and settings (the plugins their
 * `package.json` declares, their `.env`, the MCP servers of their `.mcp.json`). Recorded in
 * `<BUB_HOME>/trust.json`, keyed by the folder's real path, with a hash of each of those
 * files: a change to any of them makes the folder untrusted again.
 */
import { createHash } from "node:crypto";
import { realpath, rename, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isRecord } from "../kernel/guards.ts";
import { FileRefusedError, readBoundedFile, readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "./bounded-file.ts";
import { makeDirectoryAsync } from "./home-dir.ts";
import { errorCode, errorMessage } from "./thrown.ts";

/** What a trusted folder looked like when it was trusted. */
export interface TrustEntry {
  /** The folder's real path (symlinks resolved). */
  readonly path: string;
  /** sha256 of its `package.json`, null when it had none. */
  readonly packageJson: string | null;
  /** sha256 of its `.env`, null when it had none. */
  readonly env: string | null;
  /** sha256 of its `.mcp.json`, null (or absent, in entries written before it counted) when it had none. */
  readonly mcpJson?: string | null;
  /** When it was trusted (ISO time). */
  readonly trustedAt: string;
}

/** The files whose content a trust entry depends on. */
export const TRUSTED_FILES = { packageJson: "package.json", env: ".env", mcpJson: ".mcp.json" } as const;

/** `<home>/trust.json`. */
export function trustFile(home: string): string {
  return join(home, "trust.json");
}

/**
 * sha256 of `file`, null when it does not exist.
 * @throws FileRefusedError when it is not a regular file or larger than {@link SETTINGS_FILE_MAX_BYTES}:
 *   bub would not read it either.
 */
async function hashOf(file: string, what: string): Promise<string | null> {
  let data: Buffer;
  try {
    data = await readBoundedFile(file, { maxBytes: SETTINGS_FILE_MAX_BYTES, what });
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return null;
    throw error;
  }
  return createHash("sha256").update(data).digest("hex");
}

/** The real path of `folder` (symlinks resolved); the absolute path when it does not exist. */
export async function realFolder(folder: string): Promise<string> {
  const absolute = resolve(folder);
  return realpath(absolute).catch(() => absolute);
}

async function readEntries(home: string): Promise<TrustEntry[]> {
  let text: string;
  try {
    text = await readBoundedTextFile(trustFile(home), { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "trust.json", tooLargeFix: "remove entries with `bub trust --revoke` or delete it" });
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return [];
    throw error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`${trustFile(home)} is not valid JSON: ${errorMessage(error)}; fix or delete it`);
  }
  const list = isRecord(data) ? data.trusted : undefined;
  if (!Array.isArray(list)) return [];
  return list.filter((entry): entry is TrustEntry => isRecord(entry) && typeof entry.path === "string");
}

async function writeEntries(home: string, entries: readonly TrustEntry[]): Promise<void> {
  await makeDirectoryAsync(home);
  const file = trustFile(home);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify({ trusted: entries }, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}

/** The current hashes of `folder`'s `package.json`, `.env` and `.mcp.json`. */
async function fingerprint(folder: string): Promise<{ packageJson: string | null; env: string | null; mcpJson: string | null }> {
  const [packageJson, env, mcpJson] = await Promise.all([
    hashOf(join(folder, TRUSTED_FILES.packageJson), "package.json"),
    hashOf(join(folder, TRUSTED_FILES.env), "the .env file"),
    hashOf(join(folder, TRUSTED_FILES.mcpJson), ".mcp.json"),
  ]);
  return { packageJson, env, mcpJson };
}

/** Whether `folder` still looks as it did when `entry` was written. */
function unchanged(entry: TrustEntry, now: Awaited<ReturnType<typeof fingerprint>>): boolean {
  return now.packageJson === (entry.packageJson ?? null) && now.env === (entry.env ?? null) && now.mcpJson === (entry.mcpJson ?? null);
}

/**
 * Whether `folder` (at `path`) still matches `entry`. A file bub would refuse to read (a FIFO,
 * a device, one over the bound) leaves it untrusted; `bub trust` then says what is wrong.
 */
async function isCurrent(entry: TrustEntry, path: string): Promise<boolean> {
  const now = await fingerprint(path).catch((error: unknown) => {
    if (error instanceof FileRefusedError) return null;
    throw error;
  });
  return now !== null && unchanged(entry, now);
}

/**
 * Whether `folder` is trusted: it has an entry in `<home>/trust.json` under its real path and
 * its `package.json`, `.env` and `.mcp.json` are unchanged since. An unreadable store counts as no trust.
 */
export async function isTrusted(home: string, folder: string): Promise<boolean> {
  const path = await realFolder(folder);
  const entries = await readEntries(home).catch(() => []);
  const entry = entries.find((item) => item.path === path);
  if (!entry) return false;
  return isCurrent(entry, path);
}

/** Trusts `folder` as it is now (replacing an older entry); returns the entry. */
export async function trustFolder(home: string, folder: string, now: Date = new Date()): Promise<TrustEntry> {
  const path = await realFolder(folder);
  const entry: TrustEntry = { path, ...(await fingerprint(path)), trustedAt: now.toISOString() };
  const entries = (await readEntries(home)).filter((item) => item.path !== path);
  await writeEntries(home, [...entries, entry]);
  return entry;
}

/** Removes `folder`'s entry; false when it had none. */
export async function revokeTrust(home: string, folder: string): Promise<boolean> {
  const path = await realFolder(folder);
  const entries = await readEntries(home);
  const kept = entries.filter((item) => item.path !== path);
  if (kept.length === entries.length) return false;
  await writeEntries(home, kept);
  return true;
}

/** Every entry, with whether it still matches its folder. */
export async function listTrust(home: string): Promise<{ entry: TrustEntry; current: boolean }[]> {
  const entries = await readEntries(home);
  return Promise.all(
    entries.map(async (entry) => {
      return { entry, current: await isCurrent(entry, entry.path) };
    }),
  );
}
