/**
 * The overview page: tokens and cost per day and the slowest turns, drawn in the browser by
 * uPlot (served by bub from its own node_modules, see ./chart-assets.ts) from figures the
 * page carries in data attributes; the same figures are in tables below the charts.
 */
import { formatCount, formatDuration, formatUsd, shownDate } from "./format.ts";
import { html, type Html } from "./html.ts";
import type { Overview } from "./overview.ts";
import { layout, sessionPath } from "./pages.ts";
import type { SessionName } from "./sessions.ts";

function sessionLabel(tape: string, name: SessionName | undefined): Html {
  return name ? html`${name.sessionId}` : html`<code>${tape}</code>`;
}

/** The overview page; `names` gives tapes their session ids. */
export function overviewPage(overview: Overview, names: ReadonlyMap<string, SessionName> | null): Html {
  const { days, slowest } = overview;
  const tokens = days.reduce((sum, day) => sum + day.tokens, 0);
  const priced = days.filter((day) => day.usd !== null);
  const usd = priced.length === 0 ? null : priced.reduce((sum, day) => sum + (day.usd ?? 0), 0);
  const calls = days.reduce((sum, day) => sum + day.calls, 0);
  const pricedCalls = days.reduce((sum, day) => sum + day.priced, 0);
  const daysData = JSON.stringify(days.map((day) => ({ day: day.day, tokens: day.tokens, usd: day.usd })));
  const slowData = JSON.stringify(slowest.map((turn) => ({ label: `${names?.get(turn.tape)?.sessionId ?? turn.tape.slice(0, 8)} · Turn ${turn.number}`, seconds: turn.durationMs / 1000 })));
  const dayRows = [...days].reverse().map(
    (day) =>
      html`<tr><td>${day.day}</td><td class="num" data-label="Model calls">${formatCount(day.calls)}</td><td class="num" data-label="Tokens">${formatCount(day.tokens)}</td><td class="num" data-label="Cost" title="${day.priced} of ${day.calls} model calls priced">${formatUsd(day.usd)}</td></tr>`,
  );
  const slowRows = slowest.map(
    (turn, rank) =>
      html`<tr><td class="num" data-label="Rank">#${rank + 1}</td><td><a href="${sessionPath(turn.tape)}?around=${turn.firstId}#e${turn.firstId}">${sessionLabel(turn.tape, names?.get(turn.tape))} · Turn ${turn.number}</a></td><td class="num" data-label="Took">${formatDuration(turn.durationMs)}</td><td class="num" data-label="Calls">${turn.modelCalls} model, ${turn.toolCalls} tool</td><td data-label="Started"><time datetime="${turn.start}">${shownDate(turn.start)}</time></td><td class="preview">${turn.prompt}</td></tr>`,
  );
  const body = html`<h1>Overview</h1>
<p class="totals">${overview.sessions} session${overview.sessions === 1 ? "" : "s"} · ${formatCount(tokens)} tokens · cost ${formatUsd(usd)}${calls > pricedCalls ? html` <span class="muted">(${pricedCalls} of ${calls} model calls priced; the others are left out of the sums)</span>` : ""}</p>
<div id="overview-data" hidden data-days="${daysData}" data-slowest="${slowData}"></div>
${
  days.length === 0
    ? html`<p>No model call on any tape yet.</p>`
    : html`<section class="chart-box"><h2>Tokens per day</h2><div class="chart" id="chart-tokens" data-points="${days.length}"></div></section>
<section class="chart-box"><h2>Cost per day</h2>${priced.length === 0 ? html`<p class="muted" id="no-cost">No model call on these tapes has a known price: cost is “—”.</p>` : html`<div class="chart" id="chart-cost" data-points="${priced.length}"></div>`}</section>
<section class="chart-box"><h2>Slowest turns</h2><div class="chart" id="chart-slowest" data-points="${slowest.length}"></div></section>
<h2>Slowest turns</h2>
<table class="rows"><thead><tr><th scope="col">#</th><th scope="col">Turn</th><th scope="col">Took</th><th scope="col">Calls</th><th scope="col">Started</th><th scope="col">Asked</th></tr></thead><tbody>${slowRows}</tbody></table>
<h2>Per day</h2>
<table class="rows"><thead><tr><th scope="col">Day (UTC)</th><th scope="col">Model calls</th><th scope="col">Tokens</th><th scope="col">Cost</th></tr></thead><tbody>${dayRows}</tbody></table>`
}`;
  return layout("Overview", body, "", { styles: ["/assets/uplot.css"], scripts: ["/assets/uplot.js", "/assets/charts.js"] });
}
