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

function rows(records: readonly DeliveryRecord[], redact: (text: string) => string): Html {
  return join(
    records.map(
      (record) =>
        html`<tr><td>${record.id}</td><td><code>${record.chatId}</code></td><td>${record.sessionId}</td><td>${record.attempts}</td><td>${iso(record.updatedAt)}</td><td>${redact(record.text.slice(0, 200))}</td><td>${redact(record.error)}</td></tr>`,
    ),
  );
}

function section(title: string, note: string, records: readonly DeliveryRecord[], redact: (text: string) => string): Html {
  if (records.length === 0) return html``;
  return html`<section><h2>${title}</h2><p class="muted">${note}</p>
<table><thead><tr><th>Id</th><th>Chat</th><th>Session</th><th>Tries</th><th>When</th><th>Text</th><th>Error</th></tr></thead><tbody>${rows(records, redact)}</tbody></table></section>`;
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

/** Adds `GET /deliveries` to the view. */
export function mountDeliveries(app: Hono, list: DeliveryList, redact: (text: string) => string): void {
  app.get("/deliveries", async (context) => context.html(deliveriesPage(await list(), redact).value));
}
