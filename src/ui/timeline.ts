/**
 * The session page's timeline as HTML: anchors as section headings, turns as sections with
 * their usage and duration, tool calls as disclosure widgets holding their results.
 * Every tape value passes through {@link html}, which escapes it. Secrets are hidden before:
 * the app reads the store through a redacting view (src/tape/redacted-store.ts).
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { html, join, type Html } from "./html.ts";
import { formatCount, formatDuration, formatUsd } from "./format.ts";
import { markdownBody, messageHtml } from "./message.ts";
import { blockNumber, type TurnNumbers } from "./numbering.ts";
import { turnChart } from "./turn-chart.ts";
import { costOf, groupTimeline, turnDurationMs, turnModel, turnUsage, type AnchorBlock, type TurnBlock } from "./turns.ts";

/** What rendering needs besides the entries. */
export interface TimelineOptions {
  /** The tape, for spill links. */
  tape: string;
  /** Turn numbers on the whole tape ({@link turnNumbers} in ./numbering.ts); without them turns are not numbered. */
  numbers?: TurnNumbers;
  /** Renders an answer's Markdown (default: `renderMarkdown`; the app passes a remembering one). */
  markdown?: (text: string) => Html;
}

const SPILL_NOTICE = /\[tool output spilled: [^\]]*; handle: ([0-9a-f]{8,64})\]/;

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const texts = value.map((part: unknown) => (isRecord(part) && part.type === "text" ? String(part.text ?? "") : null));
    if (texts.every((text) => text !== null)) return texts.join("\n");
  }
  return JSON.stringify(value, null, 2) ?? "";
}

function pretty(value: unknown): string {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}

function oneLine(text: string, max = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function time(entry: TapeEntry): Html {
  const shown = entry.date.replace("T", " ").replace(/\.\d+/, "").replace("+00:00", " UTC");
  return html`<time datetime="${entry.date}">${shown}</time>`;
}

function resultBody(result: unknown, options: TimelineOptions): Html {
  const text = textOf(result);
  const spill = SPILL_NOTICE.exec(text);
  const load = spill
    ? html`<p><button type="button" class="spill" data-handle="${spill[1]}" data-tape="${options.tape}">Load the full output</button></p><pre class="spilled" hidden></pre>`
    : null;
  return html`<pre>${text}</pre>${load}`;
}

function toolCall(entry: TapeEntry, results: TapeEntry | null, options: TimelineOptions): Html {
  const calls: unknown[] = Array.isArray(entry.payload.calls) ? entry.payload.calls : [];
  const outputs: unknown[] = results && Array.isArray(results.payload.results) ? results.payload.results : [];
  const items = calls.map((call, index) => {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
    const name = String(fn.name ?? "tool");
    const args = pretty(fn.arguments ?? "");
    const result = index < outputs.length ? resultBody(outputs[index], options) : html`<p class="muted">No result on the tape yet.</p>`;
    return html`<details class="tool" id="e${entry.id}-${index}"><summary><span class="badge">tool</span> <code>${name}</code> <span class="muted">${oneLine(args, 70)}</span></summary>
<div class="tool-body"><h4>Arguments</h4><pre>${args}</pre><h4>Result${results ? html` <a class="muted" href="#e${results.id}">#${results.id}</a>` : ""}</h4>${result}</div></details>`;
  });
  const said = typeof entry.payload.content === "string" && entry.payload.content !== "" ? markdownBody(entry.payload.content, options.markdown) : "";
  return html`<div class="entry tool-call" id="e${entry.id}">${said}${items}</div>`;
}

function folded(entry: TapeEntry, label: string, body: unknown, options: TimelineOptions, className = "event"): Html {
  return html`<details class="entry ${className}" id="e${entry.id}"><summary><span class="badge">${entry.kind}</span> ${label}</summary><pre>${pretty(body)}</pre></details>`;
}

function entryHtml(entry: TapeEntry, options: TimelineOptions): Html {
  switch (entry.kind) {
    case "message":
      return messageHtml(entry, options.markdown);
    case "system":
      return folded(entry, `system prompt (${textOf(entry.payload.content ?? "").length} characters)`, textOf(entry.payload.content ?? ""), options, "system");
    case "tool_result":
      return folded(entry, "tool results", entry.payload.results, options, "tool-result");
    case "error":
      return html`<div class="entry error" id="e${entry.id}" role="note"><span class="badge err">error</span> <strong>${String(entry.payload.kind ?? "")}</strong> <pre>${String(entry.payload.message ?? pretty(entry.payload))}</pre></div>`;
    case "event":
      return folded(entry, String(entry.payload.name ?? "event"), entry.payload.data ?? entry.payload, options);
    default:
      return folded(entry, entry.kind, entry.payload, options);
  }
}

/** The entries of a turn, each tool call paired with the next tool result. */
function turnEntries(entries: readonly TapeEntry[], options: TimelineOptions): Html[] {
  const out: Html[] = [];
  const paired = new Set<number>();
  // Bookkeeping events in a row (loop.start, run, loop.step ...) fold into one line.
  let events: TapeEntry[] = [];
  const flushEvents = (): void => {
    if (events.length === 1) out.push(entryHtml(events[0], options));
    else if (events.length > 1) {
      const names = events.map((event) => String(event.payload.name ?? "event")).join(", ");
      out.push(html`<details class="entry events"><summary><span class="badge">${events.length} events</span> ${names}</summary>${events.map((event) => entryHtml(event, options))}</details>`);
    }
    events = [];
  };
  for (const [index, entry] of entries.entries()) {
    if (paired.has(entry.id)) continue;
    if (entry.kind === "event") {
      events.push(entry);
      continue;
    }
    flushEvents();
    if (entry.kind !== "tool_call") {
      out.push(entryHtml(entry, options));
      continue;
    }
    let results: TapeEntry | null = null;
    for (const later of entries.slice(index + 1)) {
      if (later.kind === "tool_call") break;
      if (later.kind === "tool_result") {
        results = later;
        break;
      }
    }
    if (results) paired.add(results.id);
    out.push(toolCall(entry, results, options));
  }
  flushEvents();
  return out;
}

function turnHtml(block: TurnBlock, options: TimelineOptions): Html {
  const usage = turnUsage(block.entries);
  const duration = turnDurationMs(block.entries);
  const model = turnModel(block.entries);
  const cost = costOf(block.entries);
  const turnId = block.entries.map((entry) => entry.meta.turn_id).find((id) => typeof id === "string" && id !== "");
  const facts = [
    model ? html`<span>${model}</span>` : null,
    usage ? html`<span title="prompt + completion tokens">${formatCount(usage.total)} tokens (${formatCount(usage.prompt)} in, ${formatCount(usage.completion)} out)</span>` : null,
    cost.calls > 0 ? html`<span class="cost" title="${cost.priced} of ${cost.calls} model calls priced">cost ${formatUsd(cost.usd)}</span>` : null,
    duration !== null && block.entries.length > 1 ? html`<span>${formatDuration(duration)}</span>` : null,
    turnId ? html`<span>turn id <code title="meta.turn_id on the tape, bub.turn_id on the trace">${String(turnId)}</code></span>` : null,
  ].filter((fact) => fact !== null);
  const number = block.title === "entries" ? null : blockNumber(block.entries, options.numbers);
  const named = number === null ? "Turn" : `Turn ${number}`;
  const title = block.title === "turn" ? named : block.title === "continued" ? `${named}, continued` : "Entries";
  const chart = block.title === "entries" ? null : turnChart(block.entries, title);
  return html`<section class="turn" data-from="${block.from}" aria-label="${title}"${number === null ? "" : html` data-turn="${number}"`}><header class="turn-head"><h3><a href="#e${block.from}">${title}</a></h3> ${time(block.entries[0])} <span class="facts">${facts}</span></header>${chart}${turnEntries(block.entries, options)}</section>`;
}

function anchorHtml(block: AnchorBlock, options: TimelineOptions): Html {
  const state = block.entry.payload.state;
  const details = state === undefined || state === null ? "" : html`<details><summary>state</summary><pre>${pretty(state)}</pre></details>`;
  const handoff = block.handoff ? entryHtml(block.handoff, options) : "";
  return html`<section class="anchor" data-from="${block.from}" id="e${block.entry.id}"><h2><span aria-hidden="true">⚓</span> ${String(block.entry.payload.name ?? "anchor")}</h2> ${time(block.entry)}${details}${handoff}</section>`;
}

/** The timeline of `entries` (oldest first) as a sequence of sections. */
export function renderTimeline(entries: readonly TapeEntry[], options: TimelineOptions): Html {
  return join(groupTimeline(entries).map((block) => (block.type === "anchor" ? anchorHtml(block, options) : turnHtml(block, options))));
}

/** Id of the first entry of the last block, where a live update of the newest page resumes. */
export function lastBlockStart(entries: readonly TapeEntry[]): number | null {
  return groupTimeline(entries).at(-1)?.from ?? null;
}
