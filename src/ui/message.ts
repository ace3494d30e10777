/**
 * A message entry on the session page: an assistant's text as rendered, sanitised Markdown
 * ({@link renderMarkdown}); a user's prompt as its words, with the context line the channel
 * put before them (`sender_id=…|channel=…` and `---Date: …---`, or the `[context: …]` after
 * the agent loop's "continue" prompt) folded behind a toggle.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { contentText } from "../tape/transcript-render.ts";
import { html, type Html } from "./html.ts";
import { renderMarkdown } from "./markdown.ts";

/** The context line and date the builtin plugin puts before a channel's prompt. */
const PROMPT_CONTEXT = /^([^\n]*)\n---Date: ([^\n]*)---\n/;

/** The context the agent loop appends to its "continue" prompt. */
const CONTINUE_CONTEXT = /\s*\[context: ([^\]\n]*)\]$/;

/** A prompt split into the channel's context header (null when it has none) and the words. */
export function splitPrompt(text: string): { header: string | null; words: string } {
  const found = PROMPT_CONTEXT.exec(text);
  if (!found) {
    const trailing = CONTINUE_CONTEXT.exec(text);
    return trailing ? { header: trailing[1], words: text.slice(0, trailing.index) } : { header: null, words: text };
  }
  return { header: `${found[1]}\n${found[2]}`, words: text.slice(found[0].length) };
}

/** A model's words: Markdown, rendered and sanitised (by `render`, default {@link renderMarkdown}). */
export function markdownBody(text: string, render: (text: string) => Html = renderMarkdown): Html {
  return html`<div class="content markdown">${render(text)}</div>`;
}

function time(entry: TapeEntry): Html {
  const shown = entry.date.replace("T", " ").replace(/\.\d+/, "").replace("+00:00", " UTC");
  return html`<time datetime="${entry.date}">${shown}</time>`;
}

/** One `message` entry as an article; `markdown` renders an answer (default {@link renderMarkdown}). */
export function messageHtml(entry: TapeEntry, markdown: (text: string) => Html = renderMarkdown): Html {
  const role = String(entry.payload.role ?? "message");
  const flags = entry.meta.incomplete === true ? html` <span class="badge warn">incomplete</span>` : "";
  const text = contentText(entry.payload.content ?? "");
  let body: Html;
  if (role === "assistant") body = markdownBody(text, markdown);
  else if (role === "user") {
    const { header, words } = splitPrompt(text);
    const context = header === null ? "" : html`<details class="context"><summary>context</summary><pre>${header}</pre></details>`;
    body = html`${context}<div class="content text">${words}</div>`;
  } else body = html`<pre class="content">${text}</pre>`;
  const calls = Array.isArray(entry.payload.tool_calls) ? html`<pre class="muted">${JSON.stringify(entry.payload.tool_calls, null, 2)}</pre>` : "";
  return html`<article class="entry message role-${role.replace(/[^a-z]/gi, "")}" id="e${entry.id}"><header><span class="badge">${role}</span>${flags} ${time(entry)}</header>${body}${calls}</article>`;
}
