/**
 * Search results for people: each hit names its session (the session id from the store's
 * name index, else the tape name), says what kind of entry matched, and shows a stretch of
 * the entry's readable text (a message's words, a tool call's name and arguments, a tool's
 * output) with every occurrence of the searched text marked.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { contentText } from "../tape/transcript-render.ts";
import { shownDate } from "./format.ts";
import { html, type Html } from "./html.ts";
import { splitPrompt } from "./message.ts";
import { layout, sessionPath } from "./pages.ts";
import type { SearchHit, SessionName } from "./sessions.ts";

/** Text of a value for reading: strings as they are, other values' strings joined. */
function flatText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(flatText).filter((text) => text !== "").join(" · ");
  if (isRecord(value)) return Object.values(value).map(flatText).filter((text) => text !== "").join(" · ");
  return "";
}

/** What a person reads in an entry, and a word for what it is. */
export function readableEntry(entry: TapeEntry): { what: string; text: string } {
  const payload = entry.payload;
  switch (entry.kind) {
    case "message": {
      const role = String(payload.role ?? "message");
      const text = contentText(payload.content ?? "");
      return { what: role, text: role === "user" ? splitPrompt(text).words : text };
    }
    case "tool_call": {
      const calls = Array.isArray(payload.calls) ? payload.calls : [];
      const said = typeof payload.content === "string" ? payload.content : "";
      const named = calls.map((call) => {
        const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
        return `${String(fn.name ?? "tool")}(${flatText(typeof fn.arguments === "string" ? safeParse(fn.arguments) : fn.arguments)})`;
      });
      return { what: "tool call", text: [said, ...named].filter((text) => text !== "").join("\n") };
    }
    case "tool_result":
      return { what: "tool result", text: flatText(payload.results) };
    case "error":
      return { what: "error", text: `${String(payload.kind ?? "")}: ${String(payload.message ?? "")}` };
    case "anchor":
      return { what: "anchor", text: `${String(payload.name ?? "")} ${flatText(payload.state)}`.trim() };
    case "event":
      return { what: `event ${String(payload.name ?? "")}`, text: flatText(payload.data) };
    default:
      return { what: entry.kind, text: flatText(payload) };
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Up to `width` characters of `text` around the first match, each match of `needle` marked. */
export function highlighted(text: string, needle: string, width = 240): Html {
  const line = text.replace(/\s+/g, " ").trim();
  const lower = line.toLowerCase();
  const wanted = needle.toLowerCase();
  const at = wanted === "" ? -1 : lower.indexOf(wanted);
  const start = at < 0 ? 0 : Math.max(0, at - Math.floor((width - wanted.length) / 3));
  const end = Math.min(line.length, start + width);
  const parts: (string | Html)[] = [start > 0 ? "…" : ""];
  let cursor = start;
  while (wanted !== "") {
    const found = lower.indexOf(wanted, cursor);
    if (found < 0 || found >= end) break;
    parts.push(line.slice(cursor, found), html`<mark>${line.slice(found, found + wanted.length)}</mark>`);
    cursor = found + wanted.length;
  }
  parts.push(line.slice(cursor, Math.max(cursor, end)), end < line.length ? "…" : "");
  return html`${parts}`;
}

function sessionLabel(tape: string, name: SessionName | undefined): Html {
  if (!name) return html`<code>${tape}</code>`;
  return html`<strong>${name.sessionId}</strong>${name.workspace ? html` <span class="muted">${name.workspace}</span>` : ""}`;
}

/** The search page: the form's text, the hits (newest first) and the sessions' names. */
export function searchPage(text: string, hits: readonly SearchHit[], limited: boolean, names: ReadonlyMap<string, SessionName> | null): Html {
  const body =
    text === ""
      ? html`<p>Type some text to find the entries of any session that contain it.</p>`
      : hits.length === 0
        ? html`<p>No entry contains “${text}”.</p>`
        : html`<p class="muted">${hits.length} match${hits.length === 1 ? "" : "es"}${limited ? " (the first ones only: narrow the search)" : ""}, newest first.</p>
<ol class="hits">${hits.map((hit) => {
            const { what, text: readable } = readableEntry(hit.entry);
            const found = readable.toLowerCase().includes(text.toLowerCase());
            return html`<li class="hit"><a class="hit-session" href="${sessionPath(hit.tape)}?around=${hit.entry.id}#e${hit.entry.id}">${sessionLabel(hit.tape, names?.get(hit.tape))}</a> <span class="badge">${what}</span> <time datetime="${hit.entry.date}">${shownDate(hit.entry.date)}</time><p class="snippet">${highlighted(readable, text)}${found ? "" : html` <span class="muted">(the match is in the entry's details)</span>`}</p></li>`;
          })}</ol>`;
  return layout(text === "" ? "Search" : `Search: ${text}`, html`<h1>Search</h1>${body}`, text);
}
