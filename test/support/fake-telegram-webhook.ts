/**
 * The webhook half of the fake Bot API (test/support/fake-telegram.ts): once a bot called
 * `setWebhook`, updates are POSTed to its URL over real HTTP with the secret token header,
 * one at a time and in order, and an update is sent again (after `retryMs`) until it is
 * answered with a 2xx, as Telegram does.
 */

/** What `setWebhook` registered. */
export interface WebhookRegistration {
  url: string;
  secret: string;
  allowedUpdates: string[];
}

/** One POST the fake made: which update (null for a raw body), and the status it got (0: no answer). */
export interface WebhookDelivery {
  updateId: number | null;
  status: number;
}

/** A Bot API answer. */
export type BotApiAnswer = { ok: true; result: unknown } | { ok: false; error_code: number; description: string };

/** The header Telegram sends the secret token in. */
const SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token";

/** Pushes updates to a registered webhook; see the module comment. */
export class FakeWebhook {
  readonly #retryMs: number;
  #registration: WebhookRegistration | null = null;
  /** Updates not yet answered with a 2xx, oldest first. */
  #queue: Record<string, unknown>[] = [];
  #pushing: Promise<void> | null = null;
  #closed = false;
  readonly #abort = new AbortController();
  #wake: (() => void) | null = null;
  readonly deliveries: WebhookDelivery[] = [];
  #waiters: { count: number; resolve: () => void }[] = [];

  constructor(retryMs: number) {
    this.#retryMs = retryMs;
  }

  get registration(): WebhookRegistration | null {
    return this.#registration;
  }

  /**
   * Answers `setWebhook`, `deleteWebhook` and `getWebhookInfo` as Telegram does. `held` are
   * the updates kept for getUpdates: setting a webhook moves them to it (they are pushed
   * first), deleting it moves what it had not delivered back; `drop_pending_updates` drops them.
   */
  answer(method: string, payload: Record<string, unknown>, held: Record<string, unknown>[]): BotApiAnswer {
    const drop = payload.drop_pending_updates === true || payload.drop_pending_updates === "true";
    if (method === "deleteWebhook") {
      this.#registration = null;
      held.unshift(...this.#queue.splice(0));
      if (drop) held.length = 0;
      return { ok: true, result: true };
    }
    if (method === "setWebhook") {
      const url = payload.url;
      if (typeof url !== "string" || !/^https?:\/\//.test(url)) return { ok: false, error_code: 400, description: "Bad Request: bad webhook: an HTTPS URL must be provided for webhook" };
      const allowed: unknown = typeof payload.allowed_updates === "string" ? JSON.parse(payload.allowed_updates) : payload.allowed_updates;
      if (drop) held.length = 0;
      this.#registration = { url, secret: typeof payload.secret_token === "string" ? payload.secret_token : "", allowedUpdates: Array.isArray(allowed) ? allowed.map(String) : [] };
      this.#queue.push(...held.splice(0));
      this.#start();
      return { ok: true, result: true };
    }
    const registration = this.#registration;
    const info = { url: registration?.url ?? "", has_custom_certificate: false, pending_update_count: registration ? this.#queue.length : held.length };
    return { ok: true, result: registration ? { ...info, allowed_updates: registration.allowedUpdates } : info };
  }

  /** Queues an update for delivery. */
  push(update: Record<string, unknown>): void {
    this.#queue.push(update);
    this.#start();
  }

  /** Resolves once the webhook answered `count` deliveries with a 2xx. */
  async delivered(count: number): Promise<void> {
    if (this.#succeeded() >= count) return;
    await new Promise<void>((resolve) => this.#waiters.push({ count, resolve }));
  }

  #succeeded(): number {
    return this.deliveries.filter((delivery) => delivery.status >= 200 && delivery.status < 300).length;
  }

  /**
   * One POST of `body` (an update, or raw text) to the registered URL, with `secret` as the
   * secret token header (the registered one unless given; null: no header). Resolves with the
   * status, 0 when no answer came (nothing listens, or the connection broke).
   */
  async post(body: Record<string, unknown> | string, secret?: string | null): Promise<number> {
    const registration = this.#registration;
    if (!registration) throw new Error("no webhook is set");
    const token = secret === undefined ? registration.secret : secret;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token !== null) headers[SECRET_HEADER] = token;
    let status = 0;
    try {
      const response = await fetch(registration.url, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body), signal: this.#abort.signal });
      await response.arrayBuffer();
      status = response.status;
    } catch {
      status = 0;
    }
    const updateId = typeof body === "string" ? null : Number(body.update_id);
    this.deliveries.push({ updateId, status });
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.#succeeded() < waiter.count) return true;
      waiter.resolve();
      return false;
    });
    return status;
  }

  #start(): void {
    if (this.#closed || !this.#registration) return;
    this.#wake?.();
    this.#pushing ??= this.#push().finally(() => {
      this.#pushing = null;
      // An update queued while the loop was ending.
      if (this.#queue.length > 0) this.#start();
    });
  }

  async #push(): Promise<void> {
    while (!this.#closed && this.#registration) {
      const next = this.#queue[0];
      if (!next) return;
      const status = await this.post(next);
      if (status >= 200 && status < 300) {
        if (this.#queue[0] === next) this.#queue.shift();
        continue;
      }
      // Not taken: sent again after a pause (cut short when another update is pushed or the fake closes).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#wake = null;
          resolve();
        }, this.#retryMs);
        this.#wake = () => {
          clearTimeout(timer);
          this.#wake = null;
          resolve();
        };
      });
    }
  }

  /** Stops pushing (a POST under way is cut off); resolves once the loop ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#abort.abort();
    this.#wake?.();
    await this.#pushing;
  }
}
