/**
 * Common Markdown to the HTML subset Telegram accepts (`parse_mode: "HTML"`): bold, italic,
 * strike, spoiler, inline code, fenced code blocks, links, headings (as bold), quotes and
 * bullet lists (•). Used by the `telegram.send` and `telegram.edit` tools.
 */

const escapeHtml = (text: string): string => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const escapeAttribute = (text: string): string => escapeHtml(text).replaceAll('"', "&quot;");

function inline(text: string): string {
  const saved: string[] = [];
  const keep = (html: string): string => `\u0000${saved.push(html) - 1}\u0000`;
  let out = text.replace(/`([^`\n]+)`/g, (_match, code: string) => keep(`<code>${escapeHtml(code)}</code>`));
  out = out.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_match, label: string, url: string) => keep(`<a href="${escapeAttribute(url)}">${inline(label)}</a>`));
  out = escapeHtml(out)
    .replace(/\*\*(?=\S)([^*]*?\S)\*\*/g, "<b>$1</b>")
    .replace(/__(?=\S)([^_]*?\S)__/g, "<b>$1</b>")
    .replace(/~~(?=\S)([^~]*?\S)~~/g, "<s>$1</s>")
    .replace(/\|\|(?=\S)([^|]*?\S)\|\|/g, "<tg-spoiler>$1</tg-spoiler>")
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, "$1<i>$2</i>")
    .replace(/(^|[^\w])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1<i>$2</i>");
  return out.replace(/\u0000(\d+)\u0000/g, (_match, index: string) => saved[Number(index)]);
}

/** `markdown` as Telegram HTML. */
export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let quote: string[] = [];
  const flushQuote = (): void => {
    if (quote.length > 0) out.push(`<blockquote>${quote.join("\n")}</blockquote>`);
    quote = [];
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flushQuote();
      const body: string[] = [];
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
