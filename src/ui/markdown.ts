/**
 * Assistant answers as HTML: the Markdown is rendered on the server with `marked`, HTML
 * written in the Markdown is shown as the text it is, and what comes out is passed through
 * `sanitize-html` with a short allowlist (text structure, code, tables, links to http(s)
 * and mailto). Nothing a tape holds can bring a script, an event
 * handler, a style, a frame or a form into the page; the Content-Security-Policy forbids
 * inline scripts on top.
 */
import { Marked } from "marked";
import sanitizeHtml from "sanitize-html";
import { escapeHtml, Html } from "./html.ts";

/** GFM; HTML written in the Markdown is shown as the text it is, never as markup. */
const markdown = new Marked({ gfm: true, breaks: false, async: false, renderer: { html: (token) => escapeHtml(token.text) } });

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "dl", "dt", "dd",
    "strong", "em", "b", "i", "del", "s", "sup", "sub", "code", "pre", "kbd", "a",
    "table", "thead", "tbody", "tr", "th", "td", "input", "details", "summary",
  ],
  allowedAttributes: { a: ["href", "title", "rel"], code: ["class"], th: ["align"], td: ["align"], ol: ["start"], input: ["type", "checked", "disabled"] },
  allowedClasses: { code: [/^language-[\w+-]+$/] },
  allowedSchemes: ["http", "https", "mailto"],
  allowProtocolRelative: false,
  // Only GFM's task-list checkboxes, never a usable form control.
  exclusiveFilter: (frame) => frame.tag === "input" && (frame.attribs.type !== "checkbox" || frame.attribs.disabled === undefined),
  transformTags: { a: sanitizeHtml.simpleTransform("a", { rel: "noopener noreferrer nofollow" }) },
  disallowedTagsMode: "escape",
};

/**
 * `text` read as Markdown, as sanitised markup.
 *
 * ```ts
 * renderMarkdown("# Plan\n- one\n<script>alert(1)</script>").value;
 * // <h1>Plan</h1><ul><li>one</li></ul>&lt;script&gt;alert(1)&lt;/script&gt;
 * ```
 */
export function renderMarkdown(text: string): Html {
  const rendered = markdown.parse(text, { async: false });
  return new Html(sanitizeHtml(rendered, SANITIZE));
}

/**
 * {@link renderMarkdown} remembering its last `limit` answers (default 2,000): a tape only
 * grows, so the same answers are rendered again on every reload and live update. One per web
 * view; the oldest answer is forgotten first.
 */
export function markdownRenderer(limit = 2000): (text: string) => Html {
  const rendered = new Map<string, Html>();
  return (text) => {
    const known = rendered.get(text);
    if (known !== undefined) {
      rendered.delete(text);
      rendered.set(text, known);
      return known;
    }
    const fresh = renderMarkdown(text);
    rendered.set(text, fresh);
    if (rendered.size > limit) {
      const oldest = rendered.keys().next();
      if (!oldest.done) rendered.delete(oldest.value);
    }
    return fresh;
  };
}
