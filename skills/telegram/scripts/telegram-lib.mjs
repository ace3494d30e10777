// Shared helpers of the Telegram skill scripts: arguments, the Bot API call, and a small
// Markdown to Telegram-HTML converter. Plain Node (>= 22), no dependencies.
import { readFileSync } from "node:fs";

/** Telegram's limit on one text message, in characters. */
export const MESSAGE_LIMIT = 4096;

/** Writes `message` to stderr and exits with status 1. */
export function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

/** The bot token: --token, else BUB_TELEGRAM_TOKEN. */
export function tokenFrom(value) {
  const token = (value || process.env.BUB_TELEGRAM_TOKEN || "").trim();
  if (!token) fail("no bot token: set BUB_TELEGRAM_TOKEN or pass --token");
  return token;
}

/** Reads a text argument: "-" means stdin; `file` (when given) is read as UTF-8 with one trailing newline dropped. */
export function readText(value, file) {
  if (file) return readFileSync(file, "utf8").replace(/\r?\n$/, "");
  if (value === "-") return readFileSync(0, "utf8").replace(/\r?\n$/, "");
  return value ?? "";
}

/** An error the Bot API answered with (it carries the HTTP status and Telegram's description). */
export class TelegramError extends Error {
  constructor(method, status, description) {
    super(`${method} failed: HTTP ${status}${description ? `: ${description}` : ""}`);
    this.status = status;
    this.description = description ?? "";
  }
}

/** Calls a Bot API method with a JSON payload and returns its `result`. */
export async function callApi(token, method, payload) {
  const root = (process.env.BUB_TELEGRAM_API_ROOT || "https://api.telegram.org").replace(/\/+$/, "");
  let response;
  try {
    response = await fetch(`${root}/bot${token}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const cause = error?.cause;
    const code = cause?.code ?? cause?.errors?.[0]?.code;
    throw new Error(`${method} failed: ${code ?? cause?.message ?? error?.message ?? error} (API root ${root})`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not JSON
  }
  if (!response.ok || !body?.ok) throw new TelegramError(method, response.status, body?.description);
  return body.result;
}

const escapeHtml = (text) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const escapeAttribute = (text) => escapeHtml(text).replaceAll('"', "&quot;");

function inline(text) {
  const saved = [];
  const keep = (html) => `\u0000${saved.push(html) - 1}\u0000`;
  let out = text.replace(/`([^`\n]+)`/g, (_m, code) => keep(`<code>${escapeHtml(code)}</code>`));
  out = out.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_m, label, url) => keep(`<a href="${escapeAttribute(url)}">${inline(label)}</a>`));
  out = escapeHtml(out);
  out = out
    .replace(/\*\*(?=\S)([^*]*?\S)\*\*/g, "<b>$1</b>")
    .replace(/__(?=\S)([^_]*?\S)__/g, "<b>$1</b>")
    .replace(/~~(?=\S)([^~]*?\S)~~/g, "<s>$1</s>")
    .replace(/\|\|(?=\S)([^|]*?\S)\|\|/g, "<tg-spoiler>$1</tg-spoiler>")
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, "$1<i>$2</i>")
    .replace(/(^|[^\w])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1<i>$2</i>");
  return out.replace(/\u0000(\d+)\u0000/g, (_m, index) => saved[Number(index)]);
}

/**
 * Converts common Markdown to the HTML subset Telegram accepts (parse_mode HTML): bold,
 * italic, strike, spoiler, inline code, fenced code blocks, links, headings (bold), quotes
 * and bullet lists (•).
 */
export function markdownToTelegramHtml(markdown) {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out = [];
  let quote = [];
  const flushQuote = () => {
    if (quote.length > 0) out.push(`<blockquote>${quote.join("\n")}</blockquote>`);
    quote = [];
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flushQuote();
      const body = [];
      index++;
      while (index < lines.length && !/^\s*```\s*$/.test(lines[index])) body.push(lines[index++]);
      const language = fence[1] ? ` class="language-${fence[1]}"` : "";
      out.push(`<pre><code${language}>${escapeHtml(body.join("\n"))}</code></pre>`);
      continue;
    }
    const quoted = /^\s*>\s?(.*)$/.exec(line);
    if (quoted) {
      quote.push(inline(quoted[1]));
      continue;
    }
    flushQuote();
    const heading = /^\s*#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      out.push(`<b>${inline(heading[1])}</b>`);
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      out.push(`${bullet[1]}• ${inline(bullet[2])}`);
      continue;
    }
    out.push(inline(line));
  }
  flushQuote();
  return out.join("\n");
}

/**
 * Splits text into parts of at most `limit` characters after `convert`, breaking at blank
 * lines, then lines, then anywhere.
 */
export function splitMessage(text, limit = MESSAGE_LIMIT, convert = (part) => part) {
  if (convert(text).length <= limit) return [text];
  const parts = [];
  let current = "";
  const push = () => {
    if (current.trim()) parts.push(current.replace(/\n+$/, ""));
    current = "";
  };
  for (const line of text.split("\n")) {
    const candidate = current ? `${current}\n${line}` : line;
    if (convert(candidate).length <= limit) {
      current = candidate;
      continue;
    }
    push();
    let rest = line;
    while (convert(rest).length > limit) {
      let cut = Math.min(rest.length, limit);
      while (cut > 1 && convert(rest.slice(0, cut)).length > limit) cut = Math.floor(cut * 0.9);
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    current = rest;
  }
  push();
  return parts;
}

/** Prefix that makes a message reach a bot that sent the source message (bots only see mentions and replies). */
export function botMention({ sourceUserId, sourceUsername, sourceDisplayName }) {
  if (sourceUserId) return `<a href="tg://user?id=${escapeAttribute(String(sourceUserId))}">${escapeHtml(sourceDisplayName || "User")}</a>\n\n`;
  if (sourceUsername) return `/bot@${escapeHtml(String(sourceUsername).replace(/^@/, ""))} `;
  return null;
}
