/**
 * Text the reference runtime produces with Python's `json.dumps` and `repr`, reproduced so
 * that the messages a model sees and the strings tools return are the same in both runtimes.
 */
import { isRecord } from "../kernel/guards.ts";

function dumpValue(value: unknown, sortKeys: boolean): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map((item) => dumpValue(item, sortKeys)).join(", ")}]`;
  if (isRecord(value)) {
    if (typeof value.toJSON === "function") return dumpValue(value.toJSON(), sortKeys);
    const keys = Object.keys(value).filter((key) => value[key] !== undefined && typeof value[key] !== "function");
    if (sortKeys) keys.sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}: ${dumpValue(value[key], sortKeys)}`).join(", ")}}`;
  }
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (Number.isFinite(value)) return JSON.stringify(value);
      return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return value.toString();
    default:
      return JSON.stringify(String(value));
  }
}

/**
 * `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators, non-ASCII kept.
 * With `sortKeys`, object keys are sorted (`sort_keys=True`).
 *
 * ```ts
 * pythonJson({ owner: "human" }); // '{"owner": "human"}'
 * ```
 */
export function pythonJson(value: unknown, options: { sortKeys?: boolean } = {}): string {
  return dumpValue(value, options.sortKeys === true);
}

/** Python's `repr()` of a string: single quotes unless the text holds only `'`, escapes for control characters. */
export function pythonRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\\") out += "\\\\";
    else if (char === quote) out += `\\${quote}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += char;
  }
  return out + quote;
}

/** Python's `format(n, ",")`: an integer with thousands separators. */
export function withThousands(value: number): string {
  const sign = value < 0 ? "-" : "";
  return sign + String(Math.abs(Math.trunc(value))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
