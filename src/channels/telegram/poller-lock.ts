/**
 * One poller per bot across processes: Telegram serves `getUpdates` to one consumer per bot
 * token, so when several gateways share a PostgreSQL database, only the one holding a
 * session-level advisory lock keyed by the bot polls. The lock lives on a dedicated
 * connection that stays open while this process polls; when the process dies its
 * connection closes, PostgreSQL releases the lock, and a process standing by takes it on
 * its next try. The `pg` driver is imported on the first try only.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type { Client } from "pg";
import { createLogger } from "../../kernel/log.ts";
import { describeError } from "../../kernel/errors.ts";
import { describeDatabaseUrl, scrubDatabaseUrl } from "../../tape/postgres/errors.ts";
import { checkDatabaseUrl } from "../../tape/postgres/lazy-store.ts";

const log = createLogger("bub:telegram");

/** This process's turn as the poller: `lost` aborts when the lock is gone (its connection broke). */
export interface PollerTurn {
  readonly lost: AbortSignal;
  /** Gives the lock up (the connection closes); other processes may take it. */
  release(): Promise<void>;
}

/** Decides whether this process may poll a bot; the polling loop awaits {@link elect}. */
export interface PollerElection {
  /** Resolves once this process holds the bot's lock, or with null when `signal` aborted first. */
  elect(signal: AbortSignal): Promise<PollerTurn | null>;
}

/** Options of {@link postgresPollerElection}. */
export interface PostgresPollerOptions {
  /** `postgres://user:password@host:port/database` (`BUB_DATABASE_URL`). */
  url: string;
  /** The bot's id (the token's part before the colon). */
  botId: string;
  /** Seconds between tries while another process holds the lock (`BUB_TELEGRAM_POLLER_RETRY_SECONDS`). */
  retrySeconds: number;
}

/** The advisory lock key of a bot: the first 64 bits of SHA-256 of `bub-telegram-poller:<bot id>`, signed. */
export function pollerLockKey(botId: string): bigint {
  return createHash("sha256").update(`bub-telegram-poller:${botId}`).digest().readBigInt64BE(0);
}

/**
 * An election by `pg_try_advisory_lock` on a dedicated connection (see the module comment).
 * Nothing connects until {@link PollerElection.elect}.
 * @throws BubError `config` for a missing or malformed URL (the message never shows it).
 */
export function postgresPollerElection(options: PostgresPollerOptions): PollerElection {
  options = { ...options, url: checkDatabaseUrl(options.url) };
  const key = pollerLockKey(options.botId).toString();
  const where = describeDatabaseUrl(options.url);
  const me = `pid ${process.pid} on ${hostname()}`;
  const describe = (error: unknown): string => scrubDatabaseUrl(describeError(error), options.url);

  /** The open connection, kept between tries while standing by. */
  let session: { client: Client; lost: AbortController } | null = null;
  const connect = async (): Promise<{ client: Client; lost: AbortController }> => {
    if (session && !session.lost.signal.aborted) return session;
    const { default: pg } = await import("pg");
    const client: Client = new pg.Client({ connectionString: options.url, application_name: "bub poller", keepAlive: true, connectionTimeoutMillis: 10_000 });
    const lost = new AbortController();
    const opened = { client, lost };
    // A broken connection ends the turn; the error itself is reported once, here.
    client.on("error", (error) => {
      if (!lost.signal.aborted) log.warn(`telegram.poller lost its connection to PostgreSQL at ${where} (${describe(error)})`);
      lost.abort();
    });
    client.on("end", () => lost.abort());
    try {
      await client.connect();
    } catch (error) {
      lost.abort();
      await client.end().catch(() => undefined);
      throw error;
    }
    session = opened;
    return opened;
  };
  /** Closes `open` (by default the current connection). */
  const close = async (open = session): Promise<void> => {
    if (open === session) session = null;
    open?.lost.abort();
    // Closing the session releases its advisory locks.
    await open?.client.end().catch(() => undefined);
  };

  /** One try: a turn when the lock was taken, null when another process holds it. */
  const tryOnce = async (): Promise<PollerTurn | null> => {
    const opened = await connect();
    const { client, lost } = opened;
    try {
      const result = await client.query<{ held: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS held", [key]);
      if (result.rows[0]?.held !== true) return null;
    } catch (error) {
      await close(opened);
      throw error;
    }
    return { lost: lost.signal, release: () => close(opened) };
  };

  return {
    async elect(signal) {
      let standingBy = false;
      let failing = false;
      while (!signal.aborted) {
        try {
          const turn = await tryOnce();
          failing = false;
          if (turn && signal.aborted) {
            await turn.release();
            return null;
          }
          if (turn) {
            log.info(`telegram.poller elected: this process (${me}) polls bot ${options.botId}`);
            return turn;
          }
          if (!standingBy) log.info(`telegram.poller standing by: another process polls bot ${options.botId}; this one (${me}) tries again every ${options.retrySeconds}s`);
          standingBy = true;
        } catch (error) {
          if (!failing) log.warn(`telegram.poller cannot reach PostgreSQL at ${where} (${describe(error)}); trying again every ${options.retrySeconds}s`);
          failing = true;
        }
        await pause(options.retrySeconds * 1000, signal);
      }
      await close();
      return null;
    },
  };
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
