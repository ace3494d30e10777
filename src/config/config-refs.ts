/**
 * Environment references in `config.yml`: a string value may name an environment variable
 * as `${NAME}` (`api_key: ${OPENROUTER_KEY}`), so the file can point at a secret without
 * holding it. References are replaced when a settings section is resolved, never when the
 * file is read or rewritten (`bub onboard` keeps them as written). `$${NAME}` stands for
 * the literal text `${NAME}`.
 */

const REFERENCE = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** What {@link expandReferences} made of a value. */
export interface Expanded {
  /** The value with its references replaced; `undefined` when it named an unset variable. */
  readonly value: unknown;
  /** Variables referenced but not set, in the order met. */
  readonly missing: readonly string[];
}

/** True when `value` is exactly one reference, `${NAME}` (its replacement is then converted like an environment value). */
export function isWholeReference(value: unknown): value is string {
  return typeof value === "string" && WHOLE_REFERENCE.test(value);
}

function expandString(text: string, env: NodeJS.ProcessEnv, missing: string[]): string | undefined {
  if (!text.includes("${")) return text;
  let unset = false;
  const replaced = text.replace(REFERENCE, (_match, escaped: string, name: string) => {
    if (escaped) return `\${${name}}`;
    const found = env[name];
    if (found === undefined) {
      missing.push(name);
      unset = true;
      return "";
    }
    return found;
  });
  return unset ? undefined : replaced;
}

/**
 * Replaces `${NAME}` references in the strings of `value` (nested lists and mappings
 * included) with variables from `env`. A string naming an unset variable counts as not
 * set at all: it becomes `undefined`, and inside a list or mapping its entry is dropped.
 */
export function expandReferences(value: unknown, env: NodeJS.ProcessEnv): Expanded {
  const missing: string[] = [];
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return expandString(item, env, missing);
    if (Array.isArray(item)) return item.map(walk).filter((entry) => entry !== undefined);
    if (typeof item === "object" && item !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(item)) {
        const expanded = walk(entry);
        if (expanded !== undefined) out[key] = expanded;
      }
      return out;
    }
    return item;
  };
  return { value: walk(value), missing };
}
