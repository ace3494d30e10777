/**
 * The web view as a Hono app over a tape store: the sessions list, a session's timeline
 * (paged), the overview (tokens, cost, slowest turns), search across tapes, spilled output,
 * and server-sent events for live pages.
 * It reads through the {@link TapeStore} contract only, so every store works.
 */
import { mountDeliveries, noDeliveriesPage, type DeliveryList } from "./deliveries.ts";
import { contextLine, contextShareOf, type ConfigValue } from "./context-share.ts";
import { findReplays, replayLines } from "./replays.ts";
import { Hono, type Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { TapeEntry, TapeStats, TapeStore } from "../kernel/tape-contract.ts";
import { UI_CSS, UI_JS } from "./assets.ts";
import { requireToken } from "./auth.ts";
import { createChangeWatch } from "./live.ts";
import { CHARTS_JS, chartLibrary } from "./chart-assets.ts";
import { markdownRenderer } from "./markdown.ts";
import { turnNumbers } from "./numbering.ts";
import { readOverview } from "./overview.ts";
import { overviewPage } from "./overview-page.ts";
import { messagePage, sessionPage, sessionRows, sessionsPage, totalsLine, type SessionPageData } from "./pages.ts";
import { searchPage } from "./search-view.ts";
import { lastEntryId, searchTapes, sessionStats, storeSessionNames, summarise, type SessionNames } from "./sessions.ts";
import { readSpill } from "./spill.ts";
import { lastBlockStart, renderTimeline } from "./timeline.ts";
import { costOf, pageStart, turnUsage } from "./turns.ts";
import { countTurns } from "../tape/turns.ts";
import { BubError } from "../kernel/errors.ts";
import { isRecord } from "../kernel/guards.ts";
import { redactedTapeStore, type TextRedaction } from "../tape/redacted-store.ts";

/** Options of {@link createUiApp}. */
export interface UiAppOptions {
  store: TapeStore;
  /** The access token every request must carry. */
  token: string;
  /** The port the view listens on (checked against the `Host` header); read on each request. */
  port: () => number;
  /** Session ids and workspaces of tape names (default: the store's name index, if it keeps one). */
  names?: SessionNames;
  /**
   * Hides known secrets in every text shown (default: none): the store is read through
   * {@link redactedTapeStore} with it, so every page, live update, search hit and spilled
   * output shows what the tape holds with the secrets replaced.
   */
  redact?: TextRedaction;
  /** How often live pages poll the store, in ms (default 1000). */
  pollMs?: number;
  /** Entries on one page of a session (default 250). */
  pageSize?: number;
  /** The delivery ledger's records, shown at `/deliveries` (./deliveries.ts); without it the page says there is no ledger. */
  deliveries?: DeliveryList;
  /**
   * Reads the settings the context line needs (`cost.models` for context windows,
   * `context.budget_share`); default: none, so the catalog's windows and the default share.
   */
  config?: ConfigValue;
}

/** The app and what must be stopped with the server. */
export interface UiApp {
  readonly app: Hono;
  /** Stops the pollers of live pages. */
  close(): void;
}

const SESSIONS_PER_PAGE = 100;
const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

function isTapeStats(value: unknown): value is TapeStats {
  return (
    isRecord(value) &&
    typeof value.tape === "string" &&
    typeof value.entries === "number" &&
    typeof value.turns === "number" &&
    (value.lastDate === null || typeof value.lastDate === "string") &&
    (value.bytes === null || typeof value.bytes === "number")
  );
}

/** The stats a sessions fingerprint (their JSON text) holds. */
function statsOfFingerprint(fingerprint: string): TapeStats[] {
  const value: unknown = JSON.parse(fingerprint);
  return Array.isArray(value) ? value.filter(isTapeStats) : [];
}

/**
 * True for a store's refusal of a tape name it could never hold (the file store's for a `/`,
 * a NUL or over 200 characters): such a name is answered like an unknown one, with a 404.
 */
function refusedName(error: unknown): boolean {
  return BubError.isInstance(error) && error.kind === "invalid_input";
}

/** `read()`'s answer, or `fallback` when the store refuses the tape name it was given. */
async function unlessRefused<T, F>(read: () => Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await read();
  } catch (error) {
    if (refusedName(error)) return fallback;
    throw error;
  }
}

function positive(value: string | undefined): number | null {
  if (value === undefined || !/^\d+$/.test(value)) return null;
  return Number(value);
}

/** The index range of the page: ending before id `before`, or holding id `around`, else the newest. */
function pageRange(entries: readonly TapeEntry[], size: number, before: number | null, around: number | null): { start: number; end: number } {
  let end = entries.length;
  if (around !== null) {
    const at = entries.findIndex((entry) => entry.id >= around);
    if (at >= 0) end = Math.min(entries.length, at + Math.floor(size / 2));
  } else if (before !== null) {
    const at = entries.findIndex((entry) => entry.id >= before);
    if (at >= 0) end = at;
  }
  let start = pageStart(entries, end, size);
  if (around !== null) {
    const at = entries.findIndex((entry) => entry.id >= around);
    if (at >= 0 && at < start) start = Math.max(0, end - size);
  }
  return { start, end };
}

/**
 * Builds the web view.
 *
 * ```ts
 * const { app, close } = createUiApp({ store, token, port: () => 8787 });
 * const response = await app.request("/?token=" + token, { headers: { host: "127.0.0.1:8787" } });
 * ```
 */
export function createUiApp(options: UiAppOptions): UiApp {
  const redact = options.redact ?? ((text: string) => text);
  const store = options.redact ? redactedTapeStore(options.store, options.redact) : options.store;
  const names = options.names ?? storeSessionNames(store) ?? undefined;
  const pageSize = options.pageSize ?? 250;
  const watch = createChangeWatch(options.pollMs ?? 1000);
  const markdown = markdownRenderer();
  const app = new Hono();

  app.use(async (context, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) context.res.headers.set(name, value);
  });
  app.use(requireToken(options.token, options.port));
  app.onError((error, context) => {
    const message = error instanceof Error ? error.message : String(error);
    return context.html(messagePage("Something failed", message).value, 500);
  });

  app.get("/assets/ui.css", (context) => context.body(UI_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/assets/ui.js", (context) => context.body(UI_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  const charts = chartLibrary();
  app.get("/assets/uplot.js", async (context) => context.body(await charts.script(), 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  app.get("/assets/uplot.css", async (context) => context.body(await charts.styles(), 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/assets/charts.js", (context) => context.body(CHARTS_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));

  app.get("/overview", async (context) => {
    const [overview, index] = await Promise.all([readOverview(store), names ? names() : null]);
    return context.html(overviewPage(overview, index).value);
  });

  app.get("/", async (context) => {
    const stats = await sessionStats(store);
    const pages = Math.max(1, Math.ceil(stats.length / SESSIONS_PER_PAGE));
    const page = Math.min(pages, Math.max(1, positive(context.req.query("page")) ?? 1));
    const shown = await summarise(store, stats.slice((page - 1) * SESSIONS_PER_PAGE, page * SESSIONS_PER_PAGE), names);
    return context.html(sessionsPage(shown, page, pages, stats.length).value);
  });

  app.get("/events", (context) =>
    streamSSE(context, async (stream) => {
      // The stats of the first page are the fingerprint; the rows' last messages are read only when it changes.
      const read = async () => JSON.stringify((await sessionStats(store)).slice(0, SESSIONS_PER_PAGE));
      let sending = Promise.resolve();
      const stop = watch.subscribe("sessions", read, null, (fingerprint) => {
        sending = sending
          .then(async () => {
            const rows = await summarise(store, statsOfFingerprint(fingerprint), names);
            await stream.writeSSE({ event: "sessions", data: JSON.stringify({ html: sessionRows(rows).value }) });
          })
          .catch(() => undefined);
      });
      await waitForAbort(stream, stop);
    }),
  );

  /** The page for a tape name that names no session: unknown, or one the store refuses. */
  const noSuchSession = (context: Context, tape: string) => context.html(messagePage("No such session", `No tape named ${tape} holds entries.`).value, 404);
  app.notFound((context) => context.html(messagePage("Not found", "There is no such page here.").value, 404));

  app.get("/s/:tape", async (context) => {
    const tape = context.req.param("tape");
    const entries = await unlessRefused(() => store.fetchAll({ tape }), []);
    const newestEntry = entries.at(-1);
    if (newestEntry === undefined) return noSuchSession(context, tape);
    const { start, end } = pageRange(entries, pageSize, positive(context.req.query("before")), positive(context.req.query("around")));
    const shown = entries.slice(start, end);
    const newest = end === entries.length;
    const index = names ? await names() : null;
    const name = index?.get(tape) ?? null;
    const [usage, related] = await Promise.all([contextShareOf(entries, options.config), findReplays(store, tape, entries, index)]);
    const newerEnd = Math.min(entries.length, end + pageSize);
    const html = sessionPage({
      tape,
      title: { tape, name },
      total: newestEntry.id,
      timeline: renderTimeline(shown, { tape, numbers: turnNumbers(entries), markdown }),
      first: shown[0]?.id ?? null,
      last: shown.at(-1)?.id ?? null,
      olderBefore: start > 0 ? entries[start].id : null,
      newerBefore: newest ? null : newerEnd === entries.length ? "" : entries[newerEnd].id,
      liveFrom: newest ? (lastBlockStart(shown) ?? 0) : null,
      totals: sessionTotals(entries),
      context: contextLine(usage),
      related: replayLines(related),
    });
    return context.html(html.value);
  });

  app.get("/s/:tape/events", async (context) => {
    const tape = context.req.param("tape");
    // Live updates are for a page that shows entries: none yet, or a name the store refuses, is a 404.
    if ((await unlessRefused(() => lastEntryId(store, tape), 0)) === 0) return noSuchSession(context, tape);
    return streamSSE(context, async (stream) => {
      let from = positive(context.req.query("from")) ?? 0;
      const seen = String(positive(context.req.query("last")) ?? 0);
      // Updates go out one at a time: each resumes where the previous one's last block began.
      let sending = Promise.resolve();
      const send = async (): Promise<void> => {
        const all = await store.fetchAll({ tape });
        const entries = all.filter((entry) => entry.id >= from);
        const newestEntry = entries.at(-1);
        if (newestEntry === undefined) return;
        const context = contextLine(await contextShareOf(all, options.config)).value;
        const update = { from, last: newestEntry.id, totals: totalsLine(sessionTotals(all)).value, context, html: renderTimeline(entries, { tape, numbers: turnNumbers(all), markdown }).value };
        from = lastBlockStart(entries) ?? from;
        await stream.writeSSE({ event: "update", data: JSON.stringify(update) });
      };
      const stop = watch.subscribe(`tape:${tape}`, async () => String(await lastEntryId(store, tape)), seen, () => {
        sending = sending.then(send).catch(() => undefined);
      });
      await waitForAbort(stream, stop);
    });
  });

  app.get("/s/:tape/spill/:handle", async (context) => {
    const tape = context.req.param("tape");
    const read = () => readSpill(store, tape, context.req.param("handle"), positive(context.req.query("cursor")) ?? 0);
    const page = await unlessRefused(read, { error: `No tape named ${tape} holds entries.` });
    // The chunks came redacted one by one; a secret cut at a chunk boundary is whole in the page.
    return context.json("content" in page ? { ...page, content: redact(page.content) } : page, "error" in page ? 404 : 200);
  });

  if (options.deliveries) mountDeliveries(app, options.deliveries, redact);
  else app.get("/deliveries", (context) => context.html(noDeliveriesPage().value));

  app.get("/search", async (context) => {
    const text = (context.req.query("q") ?? "").trim();
    const limit = 200;
    const [hits, index] = await Promise.all([text === "" ? [] : searchTapes(store, text, limit), names ? names() : null]);
    return context.html(searchPage(text, hits, hits.length >= limit, index).value);
  });

  return { app, close: () => watch.close() };
}

/** A whole tape's turns, tokens and cost. */
function sessionTotals(entries: readonly TapeEntry[]): SessionPageData["totals"] {
  return { turns: countTurns(entries), tokens: turnUsage(entries)?.total ?? null, ...costOf(entries) };
}

/** Keeps an event stream open until the page goes away, then stops listening. */
async function waitForAbort(stream: { onAbort(listener: () => void): void; writeSSE(message: { event?: string; data: string }): Promise<void> }, stop: () => void): Promise<void> {
  await stream.writeSSE({ event: "ready", data: "{}" });
  await new Promise<void>((resolve) => stream.onAbort(resolve));
  stop();
}
