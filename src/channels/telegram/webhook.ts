/**
 * The Telegram webhook (`BUB_TELEGRAM_WEBHOOK_URL`): instead of polling, the bot asks
 * Telegram to POST each update to a URL and serves those requests with a small Hono app.
 * A request must carry the webhook's secret token (header `X-Telegram-Bot-Api-Secret-Token`,
 * compared in constant time) and a JSON update; it is answered 200 only once the update was
 * taken durably (the channel's `accept`, the same step polling uses), so an update Telegram
 * considers delivered is always in the journal. Hono is imported only when the server
 * starts. TLS is not handled here: a reverse proxy in front terminates it.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { Bot } from "grammy";
import type { Update } from "grammy/types";
import { rememberSecrets } from "../../config/redaction.ts";
import { BubError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import { apiSignal, isUpdate } from "./narrow.ts";
import { ALLOWED_UPDATES } from "./polling.ts";
import { parseListen } from "./settings.ts";

const log = createLogger("bub:telegram");

/** The header Telegram sends the secret token in. */
export const SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token";
/** Telegram's updates are a few kilobytes; a body over this is refused (413) unread. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The webhook's secret token: the configured one, else one derived from the bot token (an
 * HMAC-SHA256, base64url: 43 characters Telegram accepts), so every process serving the bot
 * derives the same one without being told.
 */
export function webhookSecret(configured: string, botToken: string): string {
  const secret = configured.trim();
  if (secret !== "") return secret;
  return createHmac("sha256", botToken.trim()).update("bub telegram webhook secret token").digest("base64url");
}

/** Whether `given` is `secret`, in time that does not depend on where they differ (both are hashed to one length first). */
function sameSecret(given: string | undefined, secret: string): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/** Options for {@link startWebhookServer}. */
export interface WebhookServerOptions {
  /** The path Telegram posts to: the webhook URL's path (other paths answer 404). */
  path: string;
  host: string;
  port: number;
  secret: string;
  /** Takes an update durably (see the module comment); a rejection answers 503 and Telegram sends it again. */
  accept: (update: Update) => Promise<void>;
}

/** A running webhook server. */
export interface WebhookServer {
  /** The port it listens on (the one picked when 0 was asked for). */
  readonly port: number;
  /** Stops taking requests at once; resolves once the requests under way were answered and their connections closed. */
  close(): Promise<void>;
}

/**
 * Starts the webhook server on `host:port`.
 *
 * @throws BubError(config) when the address cannot be listened on.
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const [{ Hono }, { bodyLimit }, { getRequestListener }] = await Promise.all([import("hono"), import("hono/body-limit"), import("@hono/node-server")]);
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (new URL(c.req.url).pathname !== options.path) return c.text("Not Found", 404);
    if (c.req.method !== "POST") return c.text("Method Not Allowed", 405, { allow: "POST" });
    if (!sameSecret(c.req.header(SECRET_HEADER), options.secret)) {
      log.warn(`telegram.webhook refused a request without the right secret token (${SECRET_HEADER})`);
      return c.text("Unauthorized", 401);
    }
    await next();
  });
  // The rest of a body too large is not read: the connection cannot be used again.
  app.use("*", bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.text("Payload Too Large", 413, { connection: "close" }) }));
  app.post("*", async (c) => {
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.text("Bad Request: the body is not JSON", 400);
    }
    if (!isUpdate(body)) return c.text("Bad Request: the body is not a Telegram update", 400);
    try {
      await options.accept(body);
    } catch (error) {
      log.error(`telegram.webhook could not take update_id=${body.update_id}; Telegram will send it again`, error);
      return c.text("Service Unavailable", 503);
    }
    return c.body(null, 200);
  });

  const listener = getRequestListener(app.fetch, { overrideGlobalObjects: false });
  const open = new Set<ServerResponse>();
  let closing = false;
  const server = createServer((request, response) => {
    open.add(response);
    response.on("close", () => open.delete(response));
    // Once closing, a kept-alive connection is closed after its answer.
    if (closing) response.setHeader("connection", "close");
    void listener(request, response);
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const reason = error.code === "EADDRINUSE" ? "is in use" : error.code === "EACCES" ? "is not allowed" : `cannot be used (${error.message})`;
      reject(new BubError("config", `The Telegram webhook cannot listen on ${options.host}:${options.port}: the address ${reason}. Choose another with BUB_TELEGRAM_WEBHOOK_LISTEN.`, { cause: error }));
    });
    server.listen(options.port, options.host, () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : options.port);
    });
  });
  let closed: Promise<void> | null = null;
  return {
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        for (const response of open) if (!response.headersSent) response.setHeader("connection", "close");
        // Stops listening and closes idle connections; the callback runs once the busy ones closed too.
        server.close(() => resolve());
      });
      return closed;
    },
  };
}

/** What {@link serveWebhook} needs: the Telegram settings it reads, and the bot's token. */
export interface WebhookSettings {
  token: string;
  webhook_url: string;
  webhook_listen: string;
  webhook_secret: string;
}

/**
 * Starts the webhook server, then registers the webhook with Telegram (`setWebhook`: the
 * URL, the secret token, message and callback_query updates, pending updates kept). Each
 * update a request brings goes to `accept`. The webhook is not deleted when the server
 * closes: another process may still serve it.
 *
 * @throws BubError(config) when the listen address is unusable or Telegram refuses the webhook.
 */
export async function serveWebhook(
  bot: Pick<Bot, "api">,
  settings: WebhookSettings,
  accept: (update: Update) => Promise<void>,
  signal: AbortSignal,
  describeError: (error: unknown) => string,
): Promise<WebhookServer> {
  const url = new URL(settings.webhook_url.trim());
  const listen = parseListen(settings.webhook_listen);
  if (!listen) throw new BubError("config", `BUB_TELEGRAM_WEBHOOK_LISTEN must be host:port (got '${settings.webhook_listen}').`);
  const secret = webhookSecret(settings.webhook_secret, settings.token);
  // A derived secret is no setting, so nothing else knows to keep it out of logs and tapes.
  rememberSecrets([{ name: "telegram.webhook_secret", value: secret }]);
  const server = await startWebhookServer({ path: url.pathname, ...listen, secret, accept });
  try {
    await bot.api.setWebhook(url.href, { secret_token: secret, allowed_updates: [...ALLOWED_UPDATES], drop_pending_updates: false }, apiSignal(signal));
  } catch (error) {
    await server.close();
    throw new BubError("config", `Telegram did not accept the webhook ${url.href} (${describeError(error)}): check BUB_TELEGRAM_WEBHOOK_URL (Telegram posts only to https:// on port 443, 80, 88 or 8443).`, { cause: error });
  }
  return server;
}
