/** The web view's pages, rendered on the server; every tape value is escaped by {@link html}. */
import { formatCount, formatUsd } from "./format.ts";
import { html, type Html } from "./html.ts";
import type { SessionSummary } from "./sessions.ts";

/** The path of a session's page. */
export function sessionPath(tape: string): string {
  return `/s/${encodeURIComponent(tape)}`;
}

/** Style sheets and scripts a page needs besides the view's own (paths on this server). */
export interface PageAssets {
  styles?: readonly string[];
  scripts?: readonly string[];
}

/** A page: header with search, skip link, live-region for announcements. */
export function layout(title: string, body: Html, query = "", assets: PageAssets = {}): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${title} · bub</title>${(assets.styles ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}<link rel="stylesheet" href="/assets/ui.css"></head>
<body><a class="skip" href="#main">Skip to content</a>
<header class="site"><a class="brand" href="/">bub · sessions</a> <nav class="site-nav" aria-label="Pages of the view"><a href="/overview">Overview</a> <a href="/deliveries">Deliveries</a></nav>
<form action="/search" method="get" role="search"><label for="q">Search tapes</label> <input type="search" id="q" name="q" value="${query}" placeholder="text in any entry"> <button type="submit">Search</button></form></header>
<main id="main">${body}</main><p id="announce" class="visually-hidden" aria-live="polite"></p>
${(assets.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}<script src="/assets/ui.js" defer></script></body></html>`;
}

/** Who a session is: its id and workspace when known, else the tape name. */
function sessionTitle(summary: { tape: string; name: SessionSummary["name"] }): Html {
  if (!summary.name) return html`<code>${summary.tape}</code>`;
  return html`${summary.name.sessionId}${summary.name.workspace ? html` <span class="muted">${summary.name.workspace}</span>` : ""}`;
}

/** `2.1 KiB`, `3.4 MiB`. */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The rows of the sessions table. */
export function sessionRows(sessions: readonly SessionSummary[]): Html {
  if (sessions.length === 0) return html`<tr><td colspan="6">No session tapes yet: run <code>bub run</code>, <code>bub chat</code> or <code>bub gateway</code>.</td></tr>`;
  return html`${sessions.map(
    (session) =>
      html`<tr><td class="session"><a href="${sessionPath(session.tape)}">${sessionTitle(session)}</a></td><td class="num" data-label="Turns">${session.turns}</td><td class="num" data-label="Entries">${session.entries}</td><td class="num" data-label="Size">${formatBytes(session.bytes)}</td><td data-label="Last activity">${session.lastDate ? html`<time datetime="${session.lastDate}">${session.lastDate.replace("T", " ").replace(/\.\d+/, "").replace("+00:00", " UTC")}</time>` : ""}</td><td class="preview">${session.preview ?? ""}</td></tr>`,
  )}`;
}

/** The sessions list; live only on the first page. */
export function sessionsPage(sessions: readonly SessionSummary[], page: number, pages: number, total: number): Html {
  const pager =
    pages > 1
      ? html`<nav class="pager" aria-label="Pages">${page > 1 ? html`<a href="/?page=${page - 1}">Newer sessions</a>` : ""} <span>Page ${page} of ${pages}</span> ${page < pages ? html`<a href="/?page=${page + 1}">Older sessions</a>` : ""}</nav>`
      : "";
  const live = page === 1 ? "/events" : null;
  return layout(
    "Sessions",
    html`<h1>Sessions <span class="live" id="live" data-state="off">${live ? "connecting…" : ""}</span></h1>
<p class="muted">${total} session tape${total === 1 ? "" : "s"}, the most recently active first.</p>
<table id="sessions" class="sessions"${live ? html` data-live="${live}"` : ""}><caption class="visually-hidden">Session tapes</caption><thead><tr><th scope="col">Session</th><th scope="col">Turns</th><th scope="col">Entries</th><th scope="col">Size</th><th scope="col">Last activity</th><th scope="col">Last message</th></tr></thead>
<tbody>${sessionRows(sessions)}</tbody></table>${pager}`,
  );
}

/** What the session page shows. */
export interface SessionPageData {
  tape: string;
  title: { tape: string; name: SessionSummary["name"] };
  /** Entries on the tape. */
  total: number;
  /** The rendered timeline of this page's entries. */
  timeline: Html;
  /** First and last id on this page. */
  first: number | null;
  last: number | null;
  /** Id to pass as `before` for the older page, or null on the first page. */
  olderBefore: number | null;
  /** Id to pass as `before` for the newer page; `""` for the newest page; null when this is the newest. */
  newerBefore: number | string | null;
  /** Where live updates resume (the first id of the last block), on the newest page only. */
  liveFrom: number | null;
  /** The whole tape's turns, tokens and cost (the known prices summed; null when none is known). */
  totals: { turns: number; tokens: number | null; usd: number | null; calls: number; priced: number };
  /** The context line (share of the model's window in use; see ./context-share.ts). */
  context?: Html;
  /** Links to the session's replays, or to the original of a replay (see ./replays.ts). */
  related?: Html;
}

/** A session's turns, tokens and cost, in one line. */
export function totalsLine(totals: SessionPageData["totals"]): Html {
  const priced = totals.calls > 0 && totals.priced < totals.calls ? html` <span class="muted">(${totals.priced} of ${totals.calls} model calls priced)</span>` : "";
  return html`<span>${totals.turns} turn${totals.turns === 1 ? "" : "s"}</span> · <span>${totals.tokens === null ? "—" : formatCount(totals.tokens)} tokens</span> · <span id="session-cost">cost ${formatUsd(totals.usd)}</span>${priced}`;
}

/** A session's timeline page. */
export function sessionPage(data: SessionPageData): Html {
  const base = sessionPath(data.tape);
  const older = data.olderBefore !== null ? html`<a href="${base}?before=${data.olderBefore}">Older entries</a>` : "";
  const newer = data.newerBefore !== null ? html`<a href="${data.newerBefore === "" ? base : `${base}?before=${data.newerBefore}`}">Newer entries</a>` : "";
  const range = data.first !== null ? html`Entries ${data.first}–${data.last} of <span id="entry-count">${data.total}</span>` : html`No entries`;
  const live = data.liveFrom !== null ? `${base}/events?from=${data.liveFrom}&last=${data.last ?? 0}` : null;
  return layout(
    data.tape,
    html`<h1>${sessionTitle(data.title)}</h1>
<p class="totals" id="session-totals">${totalsLine(data.totals)}</p>
${data.context ? html`<p class="totals" id="session-context">${data.context}</p>` : ""}${data.related ?? ""}
<p><span class="muted">${range}</span> ${live ? html`<span class="live" id="live" data-state="off">connecting…</span>` : ""}</p>
<nav class="pager" aria-label="Pages">${older} ${newer}</nav>
<div id="timeline"${live ? html` data-live="${live}"` : ""}>${data.timeline}</div>
<nav class="pager" aria-label="Pages, bottom">${older} ${newer}</nav>`,
  );
}

/** A short error page. */
export function messagePage(title: string, message: string): Html {
  return layout(title, html`<h1>${title}</h1><p>${message}</p><p><a href="/">All sessions</a></p>`);
}
