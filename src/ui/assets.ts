/**
 * The web view's style sheet and script, served as files (`/assets/ui.css`, `/assets/ui.js`)
 * so the pages can forbid inline scripts and styles (Content-Security-Policy). Plain CSS and
 * browser JavaScript: there is no build step.
 */

/** The style sheet: system fonts, light and dark, visible focus. */
export const UI_CSS = `
:root { color-scheme: light dark; --fg: #1d1f23; --muted: #5d6470; --bg: #fff; --panel: #f5f6f8; --line: #d9dce1; --accent: #2456c8; --warn: #8a5a00; --err: #b3261e; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --muted: #a3aab5; --bg: #15171a; --panel: #1f2226; --line: #363a40; --accent: #8fb0ff; --warn: #f0c36b; --err: #ff8a80; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; }
header.site { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header.site .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header.site form { margin-left: auto; display: flex; gap: .4rem; align-items: center; }
input[type=search] { font: inherit; padding: .25rem .5rem; min-width: 16rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
button { font: inherit; padding: .25rem .7rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); cursor: pointer; }
main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
h1 { font-size: 1.35rem; margin: .2rem 0 .8rem; word-break: break-all; }
h1 code { font-size: 1.1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td time { white-space: nowrap; }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; max-height: 40rem; overflow: auto; }
.muted, time { color: var(--muted); font-size: .85rem; }
.badge { display: inline-block; font-size: .75rem; padding: 0 .4rem; border-radius: 3px; background: var(--panel); border: 1px solid var(--line); }
.badge.warn { color: var(--warn); } .badge.err { color: var(--err); }
.live { font-size: .85rem; color: var(--muted); } .live[data-state=on]::before { content: "● "; color: #2e9b4f; }
.anchor { margin: 1.6rem 0 .6rem; padding-top: .4rem; border-top: 2px solid var(--accent); }
.anchor h2 { display: inline; font-size: 1.05rem; margin-right: .6rem; }
.turn { margin: .8rem 0; border: 1px solid var(--line); border-radius: 6px; padding: .5rem .8rem; }
.turn-head { display: flex; gap: .8rem; align-items: baseline; flex-wrap: wrap; border-bottom: 1px dashed var(--line); margin-bottom: .4rem; }
.turn-head h3 { font-size: .95rem; margin: 0; }
.facts { display: flex; gap: .8rem; font-size: .85rem; color: var(--muted); }
.entry { margin: .35rem 0; }
.message header { display: flex; gap: .5rem; align-items: baseline; }
.role-user .badge { border-color: var(--accent); }
.role-assistant { border-left: 3px solid var(--accent); padding-left: .6rem; }
details > summary { cursor: pointer; padding: .15rem 0; }
details.event > summary, details.events > summary, details.system > summary { color: var(--muted); font-size: .85rem; }
details.tool { border: 1px solid var(--line); border-radius: 4px; padding: .2rem .5rem; background: var(--panel); margin: .3rem 0; }
details.events > .entry { margin-left: 1.2rem; }
.tool-body h4 { margin: .4rem 0 0; font-size: .8rem; color: var(--muted); }
.error { border-left: 3px solid var(--err); padding-left: .6rem; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
.hit { border-bottom: 1px solid var(--line); padding: .5rem 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.totals { margin: 0 0 .4rem; }
.facts { flex-wrap: wrap; }
.turn-head h3 a { color: inherit; text-decoration: none; } .turn-head h3 a:hover { text-decoration: underline; }
.content.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; }
.markdown { overflow-wrap: anywhere; }
.markdown > :first-child { margin-top: .2rem; } .markdown > :last-child { margin-bottom: .2rem; }
.markdown h1, .markdown h2, .markdown h3, .markdown h4 { font-size: 1.05rem; margin: .8rem 0 .3rem; word-break: normal; }
.markdown pre { white-space: pre; overflow-x: auto; background: var(--panel); padding: .5rem .7rem; border-radius: 4px; max-width: 100%; }
.markdown code { background: var(--panel); padding: 0 .2rem; border-radius: 3px; } .markdown pre code { background: none; padding: 0; }
.markdown table { display: block; overflow-x: auto; width: auto; max-width: 100%; }
.markdown blockquote { margin: .4rem 0; padding-left: .8rem; border-left: 3px solid var(--line); color: var(--muted); }
details.context { font-size: .8rem; color: var(--muted); margin: .2rem 0; } details.context pre { margin: .2rem 0; }
.turn-chart { margin: .3rem 0 .6rem; } .turn-chart ol { list-style: none; padding: 0; margin: 0; }
.span { display: grid; grid-template-columns: minmax(0, 15rem) minmax(0, 1fr); gap: .6rem; align-items: center; font-size: .8rem; margin: .15rem 0; }
.span > * { min-width: 0; } .span-label { overflow-wrap: anywhere; }
.span-track { display: block; width: 100%; height: 10px; background: var(--panel); border-radius: 2px; }
.bar.model { fill: var(--accent); } .bar.tool { fill: #2e9b4f; }
.span-axis { display: flex; justify-content: space-between; font-size: .75rem; margin-left: calc(min(15rem, 40%) + .6rem); }
mark { background: #ffe38a; color: #1d1f23; border-radius: 2px; padding: 0 1px; }
.hit .snippet { margin: .3rem 0; overflow-wrap: anywhere; }
.hit-session { font-size: 1rem; }
.chart-box { margin: 1rem 0; } .chart-box h2, main > h2 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
.chart { width: 100%; min-height: 240px; overflow: hidden; }
.uplot { font-family: inherit; } .u-legend { font-size: .8rem; color: var(--fg); }
td.preview { overflow-wrap: anywhere; }
header.site nav.site-nav { display: flex; gap: 1rem; flex-wrap: wrap; }
main > section > h2 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
.related { margin: 0 0 .4rem; font-size: .9rem; overflow-wrap: anywhere; }
table.rows td.wrap { overflow-wrap: anywhere; }
@media (max-width: 640px) {
  main { padding: .6rem; }
  header.site { padding: .5rem .6rem; gap: .5rem; }
  header.site form { margin-left: 0; flex: 1 1 100%; }
  header.site form label { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  input[type=search] { min-width: 0; flex: 1 1 auto; width: 100%; }
  table.sessions, table.sessions tbody, table.sessions tr, table.sessions td, table.rows, table.rows tbody, table.rows tr, table.rows td { display: block; width: 100%; }
  table.sessions thead, table.rows thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.sessions tr, table.rows tr { border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.sessions td, table.rows td { border: 0; padding: .1rem 0; text-align: left; white-space: normal; }
  td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .8rem; }
  .span { grid-template-columns: minmax(0, 1fr); gap: .1rem; }
  .span-axis { margin-left: 0; }
  .turn { padding: .4rem .5rem; }
}
`;

/** The script: live updates over server-sent events, and loading spilled output. */
export const UI_JS = `
"use strict";
(function () {
  var status = document.getElementById("live");
  var announce = document.getElementById("announce");
  function setStatus(on) { if (status) { status.dataset.state = on ? "on" : "off"; status.textContent = on ? "live" : "reconnecting…"; } }
  function listen(url, name, onData) {
    var source = new EventSource(url);
    source.addEventListener("open", function () { setStatus(true); });
    source.addEventListener("error", function () { setStatus(false); });
    source.addEventListener(name, function (event) { onData(JSON.parse(event.data)); });
    return source;
  }
  var timeline = document.getElementById("timeline");
  if (timeline && timeline.dataset.live) {
    listen(timeline.dataset.live, "update", function (update) {
      var blocks = timeline.querySelectorAll("[data-from]");
      for (var i = 0; i < blocks.length; i++) if (Number(blocks[i].dataset.from) >= update.from) blocks[i].remove();
      timeline.insertAdjacentHTML("beforeend", update.html);
      var totals = document.getElementById("session-totals");
      if (totals && update.totals) totals.innerHTML = update.totals;
      var context = document.getElementById("session-context");
      if (context && update.context) context.innerHTML = update.context;
      var count = document.getElementById("entry-count");
      if (count) count.textContent = String(update.last);
      if (announce) announce.textContent = "New entries up to #" + update.last;
    });
  }
  var sessions = document.getElementById("sessions");
  if (sessions && sessions.dataset.live) {
    listen(sessions.dataset.live, "sessions", function (update) {
      sessions.querySelector("tbody").innerHTML = update.html;
      if (announce) announce.textContent = "Sessions updated";
    });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.spill");
    if (!button) return;
    var output = button.parentElement.nextElementSibling;
    var cursor = Number(button.dataset.cursor || 0);
    button.disabled = true;
    fetch("/s/" + encodeURIComponent(button.dataset.tape) + "/spill/" + encodeURIComponent(button.dataset.handle) + "?cursor=" + cursor)
      .then(function (response) { return response.json(); })
      .then(function (page) {
        if (page.error) { output.textContent = page.error; output.hidden = false; return; }
        output.textContent += page.content;
        output.hidden = false;
        button.dataset.cursor = String(page.nextCursor);
        button.disabled = page.complete;
        button.textContent = page.complete ? "Full output loaded" : "Load more";
      })
      .catch(function (error) { button.disabled = false; output.textContent = String(error); output.hidden = false; });
  });
})();
`;
