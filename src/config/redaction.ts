import { setLogRedaction } from "../kernel/log.ts";

/**
 * Configured secrets (API keys, bot tokens, any secret-looking setting) and the places they
 * must not reach: text bound for the tape and the logs has them replaced with
 * `[redacted:<setting>]`, and tool processes get the environment without them
 * (docs/security.md, *Secrets*). The list is process-wide: what any framework in the process
 * knows as a secret is redacted everywhere, which only ever hides more.
 */

/** One secret: the setting (or variable) it comes from and its value. */
export interface Secret {
  readonly name: string;
  readonly value: string;
}

/** Values shorter than this are not treated as secrets (they would match ordinary text). */
export const MIN_SECRET_LENGTH = 8;

/** Provider key variables that never reach a tool's environment, whatever they hold. */
export const PROVIDER_KEY_VARIABLES: readonly string[] = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENROUTER_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "MISTRAL_API_KEY",
  "GROQ_API_KEY",
  "DEEPSEEK_API_KEY",
  "XAI_API_KEY",
  "AZURE_OPENAI_API_KEY",
];

/** The setting that lists variables a tool may see although they look secret. */
export const PASSTHROUGH_VARIABLE = "BUB_TOOL_ENV_PASSTHROUGH";

/**
 * Whether a setting key (one part of a dotted path, or a variable name) looks secret:
 * `api_key`, `token`, `*_secret`, `password`, `database_url` (it carries the database
 * password), ... (settings error messages hide values by).
 */
export function isSecretKey(key: string): boolean {
  return /(^|_)(token|key|secret|password|database_url)$|secret|password/i.test(key);
}

/** The password in a URL such as `postgres://user:password@host/db` (decoded), or "" when there is none. */
export function urlPassword(value: string): string {
  if (!value.includes("://") || !value.includes("@")) return "";
  try {
    return decodeURIComponent(new URL(value.trim()).password);
  } catch {
    return "";
  }
}

/** Whether any part of a dotted path looks secret. */
export function isSecretPath(path: string | readonly PropertyKey[]): boolean {
  const parts = typeof path === "string" ? path.split(".") : path;
  return parts.some((part) => typeof part === "string" && isSecretKey(part));
}

let known: Secret[] = [];
let knownValues = new Set<string>();

/**
 * Adds secrets to the process-wide list (values under {@link MIN_SECRET_LENGTH} characters
 * are ignored; a value already known keeps its first name). A URL with a password adds its
 * password too, so the password alone is hidden as well. Longest values come first, so a
 * secret that contains another is replaced whole.
 */
export function rememberSecrets(secrets: Iterable<Secret>): void {
  let added = false;
  const withPasswords = [...secrets].flatMap((secret) => {
    const password = urlPassword(secret.value);
    return password ? [secret, { name: secret.name, value: password }] : [secret];
  });
  for (const secret of withPasswords) {
    const value = secret.value.trim();
    if (value.length < MIN_SECRET_LENGTH || knownValues.has(value)) continue;
    known.push({ name: secret.name, value });
    knownValues.add(value);
    added = true;
  }
  if (!added) return;
  known = [...known].sort((a, b) => b.value.length - a.value.length);
  jsonForms = null;
  setLogRedaction(redactSecrets);
}

/** The secrets known so far, longest first. */
export function knownSecrets(): readonly Secret[] {
  return known;
}

/** Forgets every known secret (tests). */
export function forgetSecrets(): void {
  known = [];
  knownValues = new Set();
  jsonForms = null;
  setLogRedaction(null);
}

/** The marker a secret is replaced with. */
export function redactionMarker(name: string): string {
  return `[redacted:${name}]`;
}

/** `text` with every known secret replaced by `[redacted:<setting>]`; `text` itself when none occurs. */
export function redactSecrets(text: string, secrets: readonly Secret[] = known): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret.value)) out = out.replaceAll(secret.value, redactionMarker(secret.name));
  return out;
}

let jsonForms: { secret: Secret; json: string }[] | null = null;

/**
 * JSON text with every known secret in its strings replaced by `[redacted:<setting>]` (the
 * marker needs no escaping, so the text stays valid JSON); `text` itself when none occurs.
 */
export function redactJsonText(text: string): string {
  if (known.length === 0) return text;
  jsonForms ??= known.map((secret) => ({ secret, json: JSON.stringify(secret.value).slice(1, -1) }));
  let out = text;
  for (const { secret, json } of jsonForms) if (out.includes(json)) out = out.replaceAll(json, redactionMarker(secret.name));
  return out;
}

function listOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((item) => String(item).trim()).filter(Boolean);
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (trimmed.startsWith("[")) {
      try {
        return listOf(JSON.parse(trimmed));
      } catch {
        // not JSON: a comma list
      }
    }
    return trimmed.split(",").map((item) => item.trim()).filter(Boolean);
  }
  return [];
}

/**
 * The environment a tool's process gets: `env` without the variables that hold a secret —
 * every variable whose value is a known secret, every `BUB_*` variable whose name looks
 * secret (`BUB_API_KEY`, `BUB_TELEGRAM_TOKEN`, ...) and the well-known provider key variables
 * ({@link PROVIDER_KEY_VARIABLES}) — except those named in `passthrough`
 * (`BUB_TOOL_ENV_PASSTHROUGH`, a list or a comma-separated string).
 */
export function toolEnvironment(env: NodeJS.ProcessEnv, passthrough: unknown, secrets: readonly Secret[] = known): NodeJS.ProcessEnv {
  const allowed = new Set(listOf(passthrough));
  const values = new Set(secrets.map((secret) => secret.value));
  const providerKeys = new Set(PROVIDER_KEY_VARIABLES);
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!allowed.has(name)) {
      if (providerKeys.has(name.toUpperCase())) continue;
      if (/^BUB_/i.test(name) && isSecretKey(name)) continue;
      if (values.has(value.trim())) continue;
    }
    out[name] = value;
  }
  return out;
}

/** The secrets the environment itself holds: `BUB_*` variables with secret-looking names and the provider key variables. */
export function environmentSecrets(env: NodeJS.ProcessEnv): Secret[] {
  const found: Secret[] = [];
  const providerKeys = new Set(PROVIDER_KEY_VARIABLES);
  for (const [name, value] of Object.entries(env)) {
    if (!value || name === PASSTHROUGH_VARIABLE) continue;
    if (providerKeys.has(name.toUpperCase()) || (/^BUB_/i.test(name) && isSecretKey(name))) found.push({ name, value });
  }
  return found;
}
