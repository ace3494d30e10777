import { join, resolve } from "node:path";
import { expandHome } from "../config/paths.ts";
import { BubError } from "../kernel/errors.ts";
import { createFileTapeStore, type FileTapeStore } from "./file-store.ts";
import { createPostgresTapeStore, type PostgresTapeStore } from "./postgres/lazy-store.ts";
import { createSqliteTapeStore, type SqliteTapeStore } from "./sqlite-store.ts";

/** Which built-in store to use (`BUB_TAPE_STORE`), where (`BUB_HOME`, `BUB_TAPE_DSN`). */
export interface TapeStoreSettings {
  /** `file` (default), `sqlite` or `postgres`. */
  kind?: string;
  /** The Bub home directory (`BUB_HOME`). */
  home: string;
  /** For `sqlite`: the database path, or a `sqlite:` / `file:` URL of it (`BUB_TAPE_DSN`). */
  dsn?: string | null;
  /** For `postgres`: `postgres://user:password@host:port/database` (`BUB_DATABASE_URL`). */
  databaseUrl?: string | null;
}

/**
 * The file path a SQLite DSN names: a plain path; a SQLAlchemy-style URL
 * (`sqlite:///relative.db`, `sqlite:////absolute.db`); or a file URL (`file:///absolute.db`).
 */
export function sqlitePathFromDsn(dsn: string): string {
  let path = dsn.trim();
  const scheme = /^(sqlite3?|file):/i.exec(path);
  if (scheme) {
    path = path.slice(scheme[0].length).split("?")[0];
    const isFileUrl = scheme[1].toLowerCase() === "file";
    if (path.startsWith("//")) path = isFileUrl ? path.slice(2) : path.slice(3);
    path = decodeURIComponent(path);
  }
  if (path === "") throw new BubError("config", `BUB_TAPE_DSN ${JSON.stringify(dsn)} names no file: set it to a path such as ~/.bub/tapes.sqlite3.`);
  return resolve(expandHome(path));
}

/**
 * Builds the store the settings ask for: `file` → JSONL files in `<home>/tapes`; `sqlite` →
 * the database at `dsn` or `<home>/tapes.sqlite3`; `postgres` → the database at `databaseUrl`
 * (the store and the `pg` driver are loaded on its first call).
 * @throws BubError `config` for an unknown kind, an empty DSN or a missing database URL.
 *
 * ```ts
 * const store = createTapeStoreFromSettings({ kind: process.env.BUB_TAPE_STORE, home, dsn: process.env.BUB_TAPE_DSN });
 * ```
 */
export function createTapeStoreFromSettings(settings: TapeStoreSettings): FileTapeStore | SqliteTapeStore | PostgresTapeStore {
  const kind = (settings.kind ?? "file").trim().toLowerCase() || "file";
  const home = resolve(expandHome(settings.home));
  if (kind === "file") return createFileTapeStore({ directory: join(home, "tapes") });
  if (kind === "sqlite") {
    const path = settings.dsn && settings.dsn.trim() !== "" ? sqlitePathFromDsn(settings.dsn) : join(home, "tapes.sqlite3");
    return createSqliteTapeStore({ path });
  }
  if (kind === "postgres") return createPostgresTapeStore({ url: settings.databaseUrl ?? "" });
  throw new BubError("config", `BUB_TAPE_STORE must be 'file', 'sqlite' or 'postgres' (got ${JSON.stringify(settings.kind)}): fix the setting or unset it to use files.`);
}
