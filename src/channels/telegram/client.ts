/**
 * How the Telegram channel reaches the Bot API: grammY calls go through bub's `fetch` over
 * undici (`http/request-fetch.ts`) with a proxy-aware dispatcher, and @grammyjs/auto-retry
 * retries 429 and 5xx answers.
 * Imported only when the channel starts (grammY and undici are not loaded by `bub --help`).
 */
import { autoRetry } from "@grammyjs/auto-retry";
import { GrammyError, HttpError, type Api, type Transformer } from "grammy";
import { EnvHttpProxyAgent, ProxyAgent, type Dispatcher } from "undici";
import { requestFetch } from "../../http/request-fetch.ts";
import { BubError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";

const log = createLogger("bub:telegram");

/** What grammY's calls use of an abort signal: its polyfill's signals and real ones both have it. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
}

/**
 * The `fetch` every Bot API call and file download uses, taking the options grammY gives
 * (whose signal may be the abort-controller polyfill's).
 */
export type TelegramFetch = (url: string, init?: Omit<RequestInit, "signal"> & { signal?: AbortSignalLike | null }) => Promise<Response>;

/** How Bot API calls are retried (getUpdates is left to grammY's polling loop). */
export interface TelegramRetryOptions {
  /** Retries per call after a 429 or 5xx answer, the first try not counted (default 3). */
  maxRetryAttempts?: number;
  /** Longest `retry_after` that is waited for, in seconds (default 30); a longer one fails the call at once. */
  maxDelaySeconds?: number;
  /** Total time one call may take, retries and network failures included, in seconds (default 120). */
  deadlineSeconds?: number;
}

/** A connection to the Bot API: the fetch to give grammY, and how to describe it in logs. */
export interface TelegramConnection {
  fetch: TelegramFetch;
  /** `proxy host:port`, `proxy from the environment`, or `direct`. */
  route: string;
  close(): Promise<void>;
}

const SOCKS = /^socks(4a?|5h?)?:\/\//i;

/** A proxy URL without its credentials, for messages. */
function proxyHost(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return "(unparsable URL)";
  }
}

function socksRefusal(source: string, url: string): BubError {
  return new BubError(
    "config",
    `${source} is a SOCKS proxy (${proxyHost(url)}), and SOCKS proxies are not supported: use an HTTP proxy (http://host:port or https://host:port) instead.`,
  );
}

/**
 * grammY aborts its requests with the abort-controller polyfill on Node, and `fetch` accepts
 * only real AbortSignals: follow the polyfill's signal with a real one.
 */
function nativeSignal(given: AbortSignalLike | null | undefined): AbortSignal | undefined {
  if (given == null || given instanceof AbortSignal) return given ?? undefined;
  const controller = new AbortController();
  if (given.aborted) controller.abort();
  // The listener goes with the polyfill's controller, which grammY creates per request.
  else given.addEventListener("abort", () => controller.abort(), { once: true });
  return controller.signal;
}

/**
 * The dispatcher for Bot API traffic: the explicit proxy (`BUB_TELEGRAM_PROXY`) when one is
 * set, else the standard `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` environment variables.
 *
 * @throws BubError(config) for a SOCKS proxy or a URL that is not http(s).
 */
export function connect(proxy: string): TelegramConnection {
  let dispatcher: Dispatcher;
  let route: string;
  if (proxy) {
    if (SOCKS.test(proxy)) throw socksRefusal("BUB_TELEGRAM_PROXY", proxy);
    if (!/^https?:\/\/[^/]/i.test(proxy)) throw new BubError("config", `BUB_TELEGRAM_PROXY must be an http:// or https:// proxy URL (got '${proxyHost(proxy)}').`);
    dispatcher = new ProxyAgent(proxy);
    route = `proxy ${proxyHost(proxy)}`;
  } else {
    const names = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"];
    for (const name of names) {
      const value = process.env[name];
      if (value && SOCKS.test(value)) throw socksRefusal(name, value);
    }
    dispatcher = new EnvHttpProxyAgent();
    route = names.some((name) => process.env[name]) ? "proxy from the environment" : "direct";
  }
  const send = requestFetch(dispatcher);
  const fetch: TelegramFetch = (url, init) => send(url, { ...init, signal: nativeSignal(init?.signal) });
  return { fetch, route, close: () => dispatcher.close() };
}

/** A one-line description of a failed Bot API call (the bot token never appears). */
export function describeTelegramError(error: unknown): string {
  let text: string;
  if (error instanceof GrammyError) {
    text = `${error.method} answered ${error.error_code} ${error.description}`;
  } else if (error instanceof HttpError) {
    // grammY leaves the reason for a failed request out of its message: add it.
    const inner = error.error;
    const cause = inner instanceof Error && inner.cause instanceof Error ? ` (${inner.cause.message})` : "";
    text = inner instanceof Error && error.message.startsWith("Network request") ? `${error.message} ${inner.message}${cause}` : error.message;
  } else {
    text = error instanceof Error ? error.message : String(error);
  }
  return text.replace(/bot\d+:[\w-]+/g, "bot<token>");
}

/** Warns about each failed try, so retries are visible at the default log level. */
const logFailures: Transformer = async (prev, method, payload, signal) => {
  try {
    const response = await prev(method, payload, signal);
    if (!response.ok && (response.error_code === 429 || response.error_code >= 500)) {
      const wait = response.parameters?.retry_after;
      log.warn(`telegram.api ${method} answered ${response.error_code} ${response.description}${wait === undefined ? "" : ` (retry_after ${wait} s)`}`);
    }
    return response;
  } catch (error) {
    if (!signal?.aborted) log.warn(`telegram.api ${method} failed: ${describeTelegramError(error)}`);
    throw error;
  }
};

/** The signal type grammY's API and transformers take: its abort-controller polyfill's. */
export type GrammySignal = NonNullable<Parameters<Transformer>[3]>;

/**
 * True for a signal grammY and auto-retry can use. They type signals as the polyfill's, but
 * at run time they read only `aborted` and add and remove listeners (grammY checks just
 * `addEventListener`), which a real AbortSignal has as well.
 */
function isGrammySignal(signal: AbortSignal): signal is AbortSignal & GrammySignal {
  return typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function" && typeof signal.removeEventListener === "function";
}

/**
 * `signal` as grammY's types take it.
 * @throws TypeError for a signal without the members grammY uses (never a real AbortSignal).
 */
export function grammySignal(signal: AbortSignal): GrammySignal {
  if (!isGrammySignal(signal)) throw new TypeError("this AbortSignal lacks the listener methods grammY calls");
  return signal;
}

/**
 * Logs each failed call of `api` (a client the delivery ledger sends with, which retries by
 * itself: no auto-retry here).
 */
export function installFailureLogging(api: Api): void {
  api.config.use(logFailures);
}

/**
 * Installs the retries on `api`: @grammyjs/auto-retry for 429 (`retry_after`) and 5xx
 * answers and network failures, bounded by `maxRetryAttempts`, `maxDelaySeconds` and a
 * deadline per call (auto-retry itself retries network failures without a limit). A call
 * that still fails rejects with grammY's `GrammyError` (an answer) or `HttpError` (no answer).
 */
export function installRetries(api: Api, options: TelegramRetryOptions = {}): void {
  const deadlineMs = (options.deadlineSeconds ?? 120) * 1000;
  const retry = autoRetry({ maxRetryAttempts: options.maxRetryAttempts ?? 3, maxDelaySeconds: options.maxDelaySeconds ?? 30 });
  const bounded: Transformer = async (prev, method, payload, signal) => {
    const controller = new AbortController();
    const deadline = grammySignal(controller.signal);
    const timer = setTimeout(() => controller.abort(), deadlineMs);
    const forward = () => controller.abort();
    signal?.addEventListener("abort", forward, { once: true });
    if (signal?.aborted) controller.abort();
    try {
      return await retry(prev, method, payload, deadline);
    } catch (error) {
      if (controller.signal.aborted && !signal?.aborted && !(error instanceof GrammyError)) {
        throw new HttpError(`Call to '${method}' gave up after ${deadlineMs / 1000} s of retries`, error);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", forward);
    }
  };
  // grammY's own polling loop retries getUpdates (every 3 s) and stops it on shutdown.
  const exceptPolling =
    (transformer: Transformer): Transformer =>
    (prev, method, payload, signal) =>
      method === "getUpdates" ? prev(method, payload, signal) : transformer(prev, method, payload, signal);
  // The first installed runs closest to the network: logFailures sees every try.
  api.config.use(exceptPolling(logFailures), exceptPolling(bounded));
}
