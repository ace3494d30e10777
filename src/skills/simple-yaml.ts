/**
 * A parser for the small part of YAML that SKILL.md frontmatter almost always uses, so that
 * discovering skills does not load and warm up a full YAML parser on every start (about 15 ms
 * of a one-shot `bub run` for two bundled skills):
 *
 * ```yaml
 * name: my-skill
 * description: |
 *   Several lines,
 *   kept as written.
 * metadata:
 *   channel: telegram
 *   short-description: 'Quoted, with '' escaped'
 * ```
 *
 * Top-level keys with plain or simply quoted single-line strings, literal blocks (`|`, `|-`,
 * `|+`) and one level of nested mapping of such strings. Anything else — numbers, booleans,
 * null, flow collections, anchors, tags, comments, folded blocks, escapes, duplicate keys —
 * returns `undefined` and the caller uses the real YAML parser, so the result is always the
 * one the full parser would give.
 */

/** What {@link parseSimpleYaml} understood: a mapping of strings (and nested mappings of strings). */
export type SimpleYaml = Record<string, string | Record<string, string>>;

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$/;
const NESTED = /^([ \t]+)([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$/;
const BLOCK_HEADER = /^\|([-+]?)$/;
/** Plain scalars the YAML core schema reads as something other than a string. */
const NON_STRING = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|<<|=)$/;

/** A single-line scalar as a string, or undefined when it is not simply a string. */
function scalar(text: string): string | undefined {
  if (text.length === 0) return undefined;
  const first = text[0]!;
  if (first === "'") {
    if (text.length < 2 || !text.endsWith("'")) return undefined;
    const inner = text.slice(1, -1);
    if (/'(?!')/.test(inner.replaceAll("''", ""))) return undefined;
    return inner.replaceAll("''", "'");
  }
  if (first === '"') {
    if (text.length < 2 || !text.endsWith('"')) return undefined;
    const inner = text.slice(1, -1);
    return /["\\]/.test(inner) ? undefined : inner;
  }
  // Indicators that start something other than a plain scalar, and plain scalars that
  // contain a comment or a mapping separator.
  if (/^[-?:,[\]{}#&*!|>%@`]/.test(text) || / #|: |:$|\t/.test(text)) return undefined;
  if (NON_STRING.test(text)) return undefined;
  return text;
}

/** A literal block scalar from its lines, chomped as its header (`|`, `|-`, `|+`) says. */
function literalBlock(lines: readonly string[], chomp: string): string | undefined {
  const first = lines.find((line) => line.trim() !== "");
  if (first === undefined) return undefined;
  const indent = /^ */.exec(first)![0].length;
  if (indent === 0) return undefined;
  const body: string[] = [];
  for (const line of lines) {
    if (line.trim() === "") {
      if (line.length > indent && line.slice(0, indent).trim() === "") body.push(line.slice(indent));
      else body.push("");
      continue;
    }
    if (!line.startsWith(" ".repeat(indent)) || line.includes("\t")) return undefined;
    body.push(line.slice(indent));
  }
  // Leading blank lines with more indentation than the content change the block's
  // indentation in YAML; leave those to the full parser.
  const firstContent = body.findIndex((line) => line !== "");
  if (body.slice(0, firstContent).some((line) => line !== "")) return undefined;
  let end = body.length;
  while (end > 0 && body[end - 1] === "") end--;
  const content = body.slice(0, end).join("\n");
  if (chomp === "-") return content;
  if (chomp === "+") return `${content}\n${"\n".repeat(body.length - end)}`;
  return `${content}\n`;
}

/**
 * Parses `text` when it is a simple mapping (see the module comment); undefined otherwise.
 *
 * ```ts
 * parseSimpleYaml("name: a\ndescription: b"); // { name: "a", description: "b" }
 * parseSimpleYaml("count: 3");                 // undefined: a number, ask the YAML parser
 * ```
 */
export function parseSimpleYaml(text: string): SimpleYaml | undefined {
  if (text.includes("\r")) return undefined;
  const lines = text.split("\n");
  const result: SimpleYaml = Object.create(null) as SimpleYaml;
  let index = 0;
  const isContinuation = (line: string) => line.trim() === "" || /^[ \t]/.test(line);
  while (index < lines.length) {
    const line = lines[index]!;
    if (line.trim() === "") {
      index++;
      continue;
    }
    const match = KEY.exec(line);
    if (!match) return undefined;
    const key = match[1]!;
    if (key in result || key === "__proto__") return undefined;
    const value = match[2] ?? "";
    index++;
    let end = index;
    while (end < lines.length && isContinuation(lines[end]!)) end++;
    const nested = lines.slice(index, end);
    index = end;
    if (value === "") {
      // A nested mapping of strings (a key with nothing after it and no lines is null).
      if (!nested.some((entry) => entry.trim() !== "")) return undefined;
      const map: Record<string, string> = Object.create(null) as Record<string, string>;
      let indent: string | null = null;
      for (const entry of nested) {
        if (entry.trim() === "") continue;
        const inner = NESTED.exec(entry);
        if (!inner) return undefined;
        indent ??= inner[1]!;
        if (inner[1] !== indent || inner[1]!.includes("\t")) return undefined;
        const innerKey = inner[2]!;
        const innerValue = scalar(inner[3] ?? "");
        if (innerValue === undefined || innerKey in map || innerKey === "__proto__") return undefined;
        map[innerKey] = innerValue;
      }
      result[key] = { ...map };
      continue;
    }
    const header = BLOCK_HEADER.exec(value);
    if (header) {
      const block = literalBlock(nested, header[1]!);
      if (block === undefined) return undefined;
      result[key] = block;
      continue;
    }
    if (nested.some((entry) => entry.trim() !== "")) return undefined; // a multi-line scalar
    const parsed = scalar(value);
    if (parsed === undefined) return undefined;
    result[key] = parsed;
  }
  return { ...result };
}
