/**
 * Markdown to terminal text with marked + marked-terminal, imported on first use (they
 * cost ~150 ms to load, which only `bub chat` should pay).
 */
import type { Marked as MarkedInstance, MarkedExtension } from "marked";

/** Renders a Markdown document for a terminal `width` columns wide. */
export type MarkdownRenderer = (markdown: string, width: number) => string;

let loading: Promise<MarkdownRenderer> | null = null;

/**
 * marked-terminal 7 returns a marked extension (`{ renderer, useNewRenderer }`), while its
 * typings, written for version 6, promise a Renderer: this checks the part marked reads.
 */
function isMarkedExtension(value: unknown): value is MarkedExtension {
  return typeof value === "object" && value !== null && "renderer" in value && typeof value.renderer === "object" && value.renderer !== null;
}

/**
 * marked-terminal 7 writes the text of a list item as it is in the source (`inline` code
 * keeps its backticks, `**bold**` its stars): this renders its inline tokens instead, and
 * leaves every other text to marked-terminal (`false`).
 */
const inlineListText: MarkedExtension = {
  renderer: {
    text(token) {
      return "tokens" in token && token.tokens ? this.parser.parseInline(token.tokens) : false;
    },
  },
};

/** The shared renderer, loaded once. */
export function loadMarkdownRenderer(): Promise<MarkdownRenderer> {
  loading ??= (async () => {
    const [{ Marked }, { markedTerminal }] = await Promise.all([import("marked"), import("marked-terminal")]);
    const byWidth = new Map<number, MarkedInstance>();
    return (markdown: string, width: number): string => {
      let marked = byWidth.get(width);
      if (!marked) {
        marked = new Marked();
        // Headings are styled, not shown with their `##`.
        const extension: unknown = markedTerminal({ width, reflowText: true, tab: 2, showSectionPrefix: false });
        if (!isMarkedExtension(extension)) throw new TypeError("marked-terminal did not return a marked extension");
        marked.use(extension, inlineListText);
        byWidth.set(width, marked);
      }
      const rendered = String(marked.parse(markdown, { async: false }));
      return rendered.replace(/\n+$/, "");
    };
  })();
  return loading;
}

/**
 * Splits Markdown where everything before is finished: at the last blank line outside a
 * code fence. Returns the length of that finished prefix (0 when there is none).
 */
export function finishedPrefixLength(markdown: string): number {
  let inFence = false;
  let fence = "";
  let offset = 0;
  let cut = 0;
  for (const line of markdown.split("\n")) {
    const end = offset + line.length + 1;
    const trimmed = line.trimStart();
    const marker = /^(`{3,}|~{3,})/.exec(trimmed)?.[1];
    if (marker) {
      if (!inFence) {
        inFence = true;
        fence = marker;
      } else if (marker.startsWith(fence[0]) && marker.length >= fence.length) inFence = false;
    } else if (!inFence && trimmed === "" && end <= markdown.length) cut = end;
    offset = end;
  }
  return cut;
}
