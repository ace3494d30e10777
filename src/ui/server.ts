/**
 * `bub ui`'s server: the web view on 127.0.0.1 only, with a fresh random access token that
 * the printed URL carries.
 */
import type { DeliveryList } from "./deliveries.ts";
import { randomBytes } from "node:crypto";
import { BubError } from "../kernel/errors.ts";
import type { TapeStore } from "../kernel/tape-contract.ts";
import { createUiApp } from "./app.ts";
import type { SessionNames } from "./sessions.ts";
import type { ConfigValue } from "./context-share.ts";

/** Options of {@link startUiServer}. */
export interface UiServerOptions {
  store: TapeStore;
  /** The port (default 0: any free port). */
  port?: number;
  names?: SessionNames;
  redact?: (text: string) => string;
  pollMs?: number;
  pageSize?: number;
  /** The delivery ledger's records for `/deliveries`. */
  deliveries?: DeliveryList;
  /** Reads the settings of the context line (`cost.models`, `context.budget_share`). */
  config?: ConfigValue;
  /** The token (default: 24 random bytes, base64url); for tests. */
  token?: string;
}

/** A running web view. */
export interface UiServer {
  /** The URL to open, token included. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Stops the server, closing open pages' event streams. */
  close(): Promise<void>;
}

/**
 * Starts the web view over `store` on 127.0.0.1.
 * @throws BubError `invalid_input` when the port is taken or not allowed.
 *
 * ```ts
 * const server = await startUiServer({ store, port: 8787 });
 * console.log(server.url); // http://127.0.0.1:8787/?token=…
 * ```
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { serve } = await import("@hono/node-server");
  const token = options.token ?? randomBytes(24).toString("base64url");
  let port = options.port ?? 0;
  const ui = createUiApp({ store: options.store, token, port: () => port, names: options.names, redact: options.redact, pollMs: options.pollMs, pageSize: options.pageSize, deliveries: options.deliveries, config: options.config });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: ui.app.fetch, port, hostname: "127.0.0.1", overrideGlobalObjects: false }, () => resolve(started));
    started.once("error", (error: NodeJS.ErrnoException) => {
      const reason = error.code === "EADDRINUSE" ? "is in use" : error.code === "EACCES" ? "is not allowed" : `cannot be used (${error.message})`;
      reject(new BubError("invalid_input", `Port ${port} on 127.0.0.1 ${reason}. Choose another with --port, or --port 0 for any free one.`));
    });
  });
  const address = server.address();
  if (address !== null && typeof address === "object") port = address.port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    async close() {
      ui.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ("closeAllConnections" in server) server.closeAllConnections();
      });
    },
  };
}
