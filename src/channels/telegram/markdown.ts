/**
 * Markdown to the HTML subset Telegram accepts (`parse_mode: "HTML"`), parsed with marked:
 * bold, italic, strike, spoiler (`||text||`), inline code, code blocks, links, quotes, lists
 * (• or numbers), tables (as preformatted text). Telegram has no heading tag: headings are
 * bold. Used for the channel's replies (./format.ts) and the `telegram.send` / `telegram.edit`
 * tools.
 */
import { Lexer, type MarkedToken, type Token, type Tokens } from "marked";

const escapeHtml = (text: string): string => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const escapeAttribute = (text: string): string => escapeHtml(text).replaceAll('"', "&quot;");

const KNOWN: ReadonlySet<string> = new Set<MarkedToken["type"]>([
  "blockquote", "br", "checkbox", "code", "codespan", "def", "del", "em", "escape", "heading", "hr", "html",
  "image", "link", "list", "list_item", "paragraph", "space", "strong", "table", "text",
]);

/** A token of marked's own kinds (an extension's generic token is shown as its source). */
function isMarkedToken(token: Token): token is MarkedToken {
  return KNOWN.has(token.type);
}

/** Links Telegram takes; anything else (a relative path) is shown as its label. */
const LINK = /^(https?:|tg:|mailto:)/i;

/** `||spoiler||` is Telegram's own: marked leaves it in the text. */
const spoilers = (html: string): string => html.replace(/\|\|(?=\S)([^|]*?\S)\|\|/g, "<tg-spoiler>$1</tg-spoiler>");

function inline(tokens: readonly Token[] | undefined): string {
  return (tokens ?? []).map(inlineToken).join("");
}

function inlineToken(token: Token): string {
  if (!isMarkedToken(token)) return escapeHtml(token.raw);
  switch (token.type) {
    case "strong":
      return `<b>${inline(token.tokens)}</b>`;
    case "em":
      return `<i>${inline(token.tokens)}</i>`;
    case "del":
      return `<s>${inline(token.tokens)}</s>`;
    case "codespan":
      return `<code>${escapeHtml(token.text)}</code>`;
    case "br":
      return "\n";
    case "link":
      return LINK.test(token.href) ? `<a href="${escapeAttribute(token.href)}">${inline(token.tokens)}</a>` : inline(token.tokens);
    case "image":
      return LINK.test(token.href) ? `<a href="${escapeAttribute(token.href)}">${escapeHtml(token.text || token.href)}</a>` : escapeHtml(token.text);
    case "text":
      return token.tokens ? inline(token.tokens) : spoilers(escapeHtml(token.text));
    case "escape":
      return escapeHtml(token.text);
    case "checkbox":
      return token.checked ? "☑ " : "☐ ";
    default:
      return escapeHtml(token.raw);
  }
}

function list(token: Tokens.List, depth: number): string {
  const start = typeof token.start === "number" ? token.start : 1;
  return token.items
    .map((item, index) => {
      const marker = token.ordered ? `${start + index}.` : "•";
      const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      const body = item.tokens
        .filter((child) => child.type !== "checkbox")
        .map((child) => (isMarkedToken(child) && child.type === "list" ? list(child, depth + 1) : block(child, depth + 1)))
        .join("\n");
      return `${"  ".repeat(depth)}${marker} ${box}${body}`;
    })
    .join("\n");
}

/** One block as Telegram HTML; `depth` is the list nesting (a quote cannot hold a quote in Telegram). */
function block(token: Token, depth = 0, quoted = false): string {
  if (!isMarkedToken(token)) return escapeHtml(token.raw.trimEnd());
  switch (token.type) {
    case "paragraph":
      return inline(token.tokens);
    case "text":
      return token.tokens ? inline(token.tokens) : spoilers(escapeHtml(token.text));
    case "heading":
      return `<b>${inline(token.tokens)}</b>`;
    case "code": {
      const language = /^[\w+#.-]+/.exec(token.lang ?? "")?.[0];
      return `<pre><code${language ? ` class="language-${escapeAttribute(language)}"` : ""}>${escapeHtml(token.text)}</code></pre>`;
    }
    case "blockquote": {
      const body = joinBlocks(token.tokens, (child) => block(child, depth, true));
      return quoted ? body : `<blockquote>${body}</blockquote>`;
    }
    case "list":
      return list(token, depth);
    case "table":
      return `<pre>${escapeHtml(token.raw.trimEnd())}</pre>`;
    case "hr":
      return "──────────";
    case "space":
    case "def":
      return "";
    default:
      return escapeHtml(token.raw.trimEnd());
  }
}

/** A block of a Markdown document: its Telegram HTML, its source, and whether a blank line comes before it. */
export interface TelegramBlock {
  readonly html: string;
  readonly source: string;
  readonly blankBefore: boolean;
  /** A code block's code (to split it by lines). */
  readonly code?: string;
}

/** The blocks of `tokens` with what separates them (a blank line in the source stays one). */
function blocksOf(tokens: readonly Token[], render: (token: Token) => string): TelegramBlock[] {
  const blocks: TelegramBlock[] = [];
  let gap = "";
  for (const token of tokens) {
    if (token.type === "space" || token.type === "def") {
      gap += token.raw;
      continue;
    }
    const source = token.raw.replace(/\n+$/, "");
    const trailing = token.raw.slice(source.length);
    const html = render(token);
    if (html.trim() === "") {
      gap += trailing;
      continue;
    }
    const blankBefore = blocks.length > 0 && (gap.match(/\n/g)?.length ?? 0) >= 2;
    blocks.push(token.type === "code" && typeof token.text === "string" ? { html, source, blankBefore, code: token.text } : { html, source, blankBefore });
    gap = trailing;
  }
  return blocks;
}

function joinBlocks(tokens: readonly Token[], render: (token: Token) => string): string {
  return blocksOf(tokens, render)
    .map((item, index) => (index === 0 ? "" : item.blankBefore ? "\n\n" : "\n") + item.html)
    .join("");
}

/**
 * The top-level blocks of `markdown` (paragraphs, headings, code blocks, lists, quotes,
 * tables), each converted on its own, so a reply can be split between them (./format.ts).
 */
export function markdownBlocks(markdown: string): TelegramBlock[] {
  return blocksOf(Lexer.lex(markdown.replace(/\r\n?/g, "\n"), { gfm: true }), (token) => block(token));
}

/**
 * `markdown` as Telegram HTML.
 *
 * ```ts
 * markdownToTelegramHtml("## Done\n\n**all** tests pass"); // "<b>Done</b>\n\n<b>all</b> tests pass"
 * ```
 */
export function markdownToTelegramHtml(markdown: string): string {
  return markdownBlocks(markdown)
    .map((item, index) => (index === 0 ? "" : item.blankBefore ? "\n\n" : "\n") + item.html)
    .join("");
}
