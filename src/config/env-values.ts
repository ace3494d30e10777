/** Environment strings to setting values, by the zod type of the setting. */
import { baseDef } from "./zod-def.ts";

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Converts an environment string to what a field expects: numbers, booleans (`1`/`0`,
 * `true`/`false`, `yes`/`no`, `on`/`off`), lists (comma separated, or JSON) and maps (JSON).
 * A string that does not convert is passed on as it is, for the schema to report.
 */
export function parseEnvValue(raw: string, field: unknown): unknown {
  const def = baseDef(field);
  const trimmed = raw.trim();
  switch (def?.type) {
    case "number":
    case "int":
    case "bigint":
      return trimmed === "" || Number.isNaN(Number(trimmed)) ? raw : Number(trimmed);
    case "boolean": {
      const lower = trimmed.toLowerCase();
      if (["1", "true", "yes", "on"].includes(lower)) return true;
      if (["0", "false", "no", "off", ""].includes(lower)) return false;
      return raw;
    }
    case "array":
    case "set":
      if (trimmed === "null") return null;
      if (trimmed.startsWith("[")) return parseJson(trimmed);
      return trimmed
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== "")
        .map((item) => parseEnvValue(item, def.element));
    case "object":
    case "record":
    case "map":
    case "tuple":
      return trimmed === "null" ? null : parseJson(trimmed);
    case "union":
      if (trimmed.startsWith("{") || trimmed.startsWith("[")) return parseJson(trimmed);
      return raw;
    default:
      return raw;
  }
}
