/**
 * The HTTP side of model calls: the Fetch API over undici (`http/request-fetch.ts`) on a
 * dispatcher that belongs to one model client (never the process-wide global dispatcher, so
 * two frameworks in one process keep their own connections, proxies and timeouts).
 *
 * The dispatcher is undici's `EnvHttpProxyAgent`: `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`
 * (or their lower-case forms) route requests the usual way. It gives up on a connection
 * that takes longer than {@link CONNECT_TIMEOUT_MS}, and on a response that sends no byte
 * for the idle timeout (undici's `headersTimeout` and `bodyTimeout`; the failure carries the
 * code `UND_ERR_HEADERS_TIMEOUT` or `UND_ERR_BODY_TIMEOUT`, which `classifyModelError`
 * reports as a `timeout`).
 */
import type { FetchFunction } from "../http/request-fetch.ts";
import { BubError, describeError } from "../kernel/errors.ts";

/** How long opening a connection (TCP, TLS, or the tunnel through a proxy) may take. */
export const CONNECT_TIMEOUT_MS = 30_000;

/** What {@link createModelTransport} needs. */
export interface ModelTransportOptions {
  /** Where the proxy variables are read. */
  readonly env: NodeJS.ProcessEnv;
  /** Seconds a response may stay silent (before its headers, or between body bytes); 0 or null: no limit. */
  readonly idleTimeoutSeconds: number | null;
  /** Milliseconds opening a connection may take; default {@link CONNECT_TIMEOUT_MS}. */
  readonly connectTimeoutMs?: number;
}

/** The `fetch` the provider packages use, and how to release its connections. */
export interface ModelTransport {
  readonly fetch: FetchFunction;
  /** Closes the dispatcher once its requests have finished. */
  close(): Promise<void>;
}

/** The first non-empty value among `names`, or "" (so undici does not fall back to `process.env`). */
function envValue(env: NodeJS.ProcessEnv, ...names: string[]): string {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
  }
  return "";
}

/**
 * Builds a model client's transport. undici and the `fetch` over it are imported here, so a
 * process that never calls a model never loads them.
 *
 * @throws BubError `config` when a proxy variable holds something that is not a URL.
 */
export async function createModelTransport(options: ModelTransportOptions): Promise<ModelTransport> {
  const [{ EnvHttpProxyAgent, Pool }, { requestFetch }] = await Promise.all([import("undici"), import("../http/request-fetch.ts")]);
  const seconds = options.idleTimeoutSeconds;
  const idleMs = seconds !== null && seconds > 0 ? Math.ceil(seconds * 1000) : 0;
  const timeouts = { headersTimeout: idleMs, bodyTimeout: idleMs };
  const connect = { timeout: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS };
  const httpProxy = envValue(options.env, "http_proxy", "HTTP_PROXY");
  const httpsProxy = envValue(options.env, "https_proxy", "HTTPS_PROXY");
  let dispatcher: InstanceType<typeof EnvHttpProxyAgent>;
  try {
    dispatcher = new EnvHttpProxyAgent({
      httpProxy,
      httpsProxy,
      noProxy: envValue(options.env, "no_proxy", "NO_PROXY"),
      ...timeouts,
      // Direct connections use `connect`; through a proxy, the connection to the proxy
      // uses `proxyTls` and the TLS handshake with the server inside the tunnel `requestTls`.
      connect,
      proxyTls: connect,
      requestTls: connect,
      // The proxy's answer to CONNECT is bounded by the idle timeout too (undici: 300 s).
      clientFactory: (origin, clientOptions) => new Pool(origin, { ...clientOptions, ...timeouts }),
    });
  } catch (error) {
    // The values are not repeated: a proxy URL may carry a password.
    const set = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"].filter((name) => options.env[name]);
    throw new BubError("config", `The proxy settings cannot be used (${describeError(error)}): check ${set.join(", ") || "HTTPS_PROXY and HTTP_PROXY"}.`, { cause: error });
  }
  return { fetch: requestFetch(dispatcher), close: () => dispatcher.close() };
}
