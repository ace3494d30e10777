/**
 * The page of the outbound delivery ledger in `bub ui` (`/deliveries`): dead letters (replies
 * the gateway gave up on), replies possibly sent twice, and how many wait to be sent. It only
 * shows them; `bub delivery retry|purge` acts on them.
 */
import type { Hono } from "hono";
import type { DeliveryRecord } from "../channels/delivery/types.ts";
import { html, join, type Html } from "./html.ts";
import { layout } from "./pages.ts";

/** Reads the ledger's records that are pending, dead or possibly repeated. */
export type DeliveryList = () => Promise<DeliveryRecord[]>;

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/** At most 200 characters, cut after redaction so that no part of a secret is left at the cut. */
function shortened(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function rows(records: readonly DeliveryRecord[], redact: (text: string) => string): Html {
  return join(
    records.map(
      (record) =>
        html`<tr><td class="num" data-label="Id">${record.id}</td><td class="wrap" data-label="Chat"><code>${record.chatId}</code></td><td class="wrap" data-label="Session">${record.sessionId}</td><td class="num" data-label="Tries">${record.attempts}</td><td data-label="When"><time datetime="${iso(record.updatedAt)}">${iso(record.updatedAt)}</time></td><td class="preview">${shortened(redact(record.text))}</td><td class="preview error-text" data-label="Error">${redact(record.error)}</td></tr>`,
    ),
  );
}

function section(title: string, note: string, records: readonly DeliveryRecord[], redact: (text: string) => string): Html {
  if (records.length === 0) return html``;
  return html`<section><h2>${title}</h2><p class="muted">${note}</p>
<table class="rows"><thead><tr><th scope="col">Id</th><th scope="col">Chat</th><th scope="col">Session</th><th scope="col">Tries</th><th scope="col">When</th><th scope="col">Text</th><th scope="col">Error</th></tr></thead><tbody>${rows(records, redact)}</tbody></table></section>`;
}

/** The page for these records (every text through `redact`). */
export function deliveriesPage(records: readonly DeliveryRecord[], redact: (text: string) => string): Html {
  const dead = records.filter((record) => record.state === "dead");
  const repeated = records.filter((record) => record.state === "sent");
  const pending = records.length - dead.length - repeated.length;
  const body = html`<h1>Deliveries</h1>
<p>${pending} repl${pending === 1 ? "y waits" : "ies wait"} to be sent; ${dead.length} dead letter${dead.length === 1 ? "" : "s"}.</p>
${section("Dead letters", "Given up on. Send again with bub delivery retry ID (or --all); forget with bub delivery purge ID.", dead, redact)}
${section("Possibly sent twice", "Sent after a try whose connection died after the request left.", repeated, redact)}`;
  return layout("Deliveries", body);
}

/** The page of a view that has no delivery ledger to read (a view built without `deliveries`). */
export function noDeliveriesPage(): Html {
  return layout("Deliveries", html`<h1>Deliveries</h1><p>This view reads no delivery ledger. <code>bub ui</code> shows the one the gateway keeps in bub's home.</p>`);
}

/** Adds `GET /deliveries` to the view. */
export function mountDeliveries(app: Hono, list: DeliveryList, redact: (text: string) => string): void {
  app.get("/deliveries", async (context) => context.html(deliveriesPage(await list(), redact).value));
}
