/**
 * HTML built from tagged templates: every interpolated value is escaped unless it is
 * already {@link Html}, so tape text (model and user output) can never become markup.
 */

/** A fragment of markup that is safe to insert as is. */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** `text` with `& < > " '` replaced by entities: safe in element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

/**
 * Markup from a template: strings and numbers are escaped, arrays are joined, `null`,
 * `undefined` and `false` render as nothing, and {@link Html} values are inserted as is.
 *
 * ```ts
 * html`<p title="${entry.kind}">${text}</p>`;
 * ```
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let index = 0; index < values.length; index++) out += render(values[index]) + strings[index + 1];
  return new Html(out);
}

/** Markup joined from parts (each escaped unless already {@link Html}). */
export function join(parts: readonly unknown[]): Html {
  return new Html(parts.map(render).join(""));
}
