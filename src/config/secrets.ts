/**
 * The secrets a settings store holds: every string under a secret-looking key
 * ({@link isSecretKey}: `api_key` and its per-provider map, `telegram.token`, `*_secret`,
 * `password`, `database_url`, ...) and every URL with a password, in the resolved sections
 * and in the config file, plus the secret variables of the environment. See src/config/redaction.ts for where they are kept out of.
 */
import { environmentSecrets, isSecretKey, MIN_SECRET_LENGTH, rememberSecrets, urlPassword, type Secret } from "./redaction.ts";
import type { SettingsStore } from "../kernel/settings-contract.ts";
import { Settings } from "./settings.ts";

function walk(value: unknown, path: string[], secret: boolean, out: Secret[]): void {
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (secret && trimmed.length >= MIN_SECRET_LENGTH && !trimmed.includes("${")) out.push({ name: path.join("."), value: trimmed });
    // A URL with a password (a database or proxy URL) is a secret whatever its key.
    else if (urlPassword(trimmed) !== "") out.push({ name: path.join("."), value: trimmed });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, [...path, String(index)], secret, out));
    return;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) walk(child, [...path, key], secret || isSecretKey(key), out);
  }
}

/**
 * Every secret `settings` knows: the resolved values of its sections whose schema is loaded
 * (a section that does not validate is skipped), then the config file's raw data, then the
 * environment's secret variables. Named by dotted setting path (`api_key.openai`,
 * `telegram.token`) or variable.
 */
export function collectSecrets(settings: SettingsStore, env: NodeJS.ProcessEnv = process.env): Secret[] {
  const out: Secret[] = [];
  const sections = settings instanceof Settings ? settings.sections : [];
  for (const section of sections) {
    let values: unknown;
    try {
      values = settings.get(section);
    } catch {
      continue;
    }
    walk(values, section.section === null ? [] : [section.section], false, out);
  }
  walk(settings.file?.data ?? {}, [], false, out);
  out.push(...environmentSecrets(env));
  return out;
}

/** What {@link rememberSettingsSecrets} last found per store, at which revision and environment. */
const remembered = new WeakMap<SettingsStore, { revision: number; env: NodeJS.ProcessEnv; found: Secret[] }>();

/**
 * {@link collectSecrets} added to the process-wide list; answers the list it found. Called on
 * every turn: a store whose revision and environment are unchanged is not walked again.
 */
export function rememberSettingsSecrets(settings: SettingsStore, env: NodeJS.ProcessEnv = process.env): Secret[] {
  const last = remembered.get(settings);
  if (last && settings.revision !== undefined && last.revision === settings.revision && last.env === env) {
    rememberSecrets(last.found); // cheap when they are known; puts them back after forgetSecrets()
    return last.found;
  }
  const found = collectSecrets(settings, env);
  rememberSecrets(found);
  if (settings.revision !== undefined) remembered.set(settings, { revision: settings.revision, env, found });
  return found;
}
