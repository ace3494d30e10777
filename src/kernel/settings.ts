import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { BubError } from "./errors.ts";
import { expandReferences, isWholeReference } from "./config-refs.ts";
import { createLogger, refreshLogLevel } from "./log.ts";

const log = createLogger("config");

/**
 * What the settings store needs of a schema: its fields by key (`shape`) and `safeParse`.
 * Both a zod 4 `z.object(...)` and a `settingsSchema(...)` from `settings-fields.ts`
 * (no zod) satisfy it. The store converts an environment string by the type of the field
 * it is for: zod's type name under optional/nullable/default wrappers, or the field's
 * `kind`. The store itself never imports zod, so `bub --help` does not pay for it.
 */
export interface SettingsSchema<T = Record<string, unknown>> {
  readonly shape: Record<string, unknown>;
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: readonly SchemaIssue[] } };
}

/** One validation problem, as zod reports it. */
export interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly code?: string;
  readonly expected?: string;
}

/** A group of settings: a YAML section (or the root), an env prefix and a schema. */
export interface SettingsSection<T = Record<string, unknown>> {
  /** Section name in `config.yml`; `null` for keys at the root (the agent and channel settings). */
  readonly section: string | null;
  /** Identifies the section for {@link Settings.get}. Defaults to `section`. */
  readonly id: string;
  /** Environment prefix, e.g. `BUB_` (root) or `BUB_TELEGRAM_`. */
  readonly envPrefix: string;
  /** The schema, or a function that imports it when the settings are first needed. */
  readonly schema: SettingsSchema<T> | (() => SettingsSchema<T> | Promise<SettingsSchema<T>>);
  /** Extra values derived from the environment, below the YAML file in precedence. */
  readonly fromEnv?: (env: NodeJS.ProcessEnv) => Record<string, unknown>;
}

/**
 * Declares a settings section.
 *
 * ```ts
 * const mine = defineSettings({ id: "mine", section: "mine", schema: () => z.object({ level: z.number().default(1) }) });
 * // or, without zod: schema: settingsSchema({ level: field.number().default(1) })
 * framework.settings.register(mine);
 * (await framework.settings.load(mine)).level; // env BUB_MINE_LEVEL, then `mine.level` in config.yml
 * ```
 */
export function defineSettings<T>(options: {
  id?: string;
  section: string | null;
  envPrefix?: string;
  schema: SettingsSection<T>["schema"];
  fromEnv?: SettingsSection<T>["fromEnv"];
}): SettingsSection<T> {
  const id = options.id ?? options.section ?? "root";
  const envPrefix = options.envPrefix ?? (options.section ? `BUB_${options.section.toUpperCase()}_` : "BUB_");
  return { id, section: options.section, envPrefix, schema: options.schema, fromEnv: options.fromEnv };
}

/** Where a value came from, for error messages. */
type Source = { kind: "env"; variable: string } | { kind: "file"; file: string; line: number | null } | { kind: "default" };

/** The parsed config file: its data and where each key path sits. */
export interface ConfigFile {
  readonly path: string;
  readonly data: Record<string, unknown>;
  /** 1-based line of a dotted key path, when known. */
  lineOf(path: readonly PropertyKey[]): number | null;
}

/** A config file that does not exist or is empty. */
export function emptyConfigFile(path: string): ConfigFile {
  return { path, data: {}, lineOf: () => null };
}

/** Thrown when a setting has an invalid value; the message names key, source and expectation. */
export class ConfigError extends BubError {
  constructor(message: string, details?: Record<string, unknown>) {
    super("config", message, { details });
    this.name = "ConfigError";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Deep-merges `updates` into `base` in place (incoming values win; nested objects merged). */
export function mergeConfig(base: Record<string, unknown>, ...updates: readonly (Record<string, unknown> | null | undefined)[]): Record<string, unknown> {
  for (const update of updates) {
    if (!update) continue;
    for (const [key, value] of Object.entries(update)) {
      if (isRecord(value) && isRecord(base[key])) mergeConfig(base[key] as Record<string, unknown>, value);
      else base[key] = isRecord(value) || Array.isArray(value) ? structuredClone(value) : value;
    }
  }
  return base;
}

/**
 * A field's type name, for env parsing: zod's under optional/nullable/default wrappers, or
 * the `kind` of a field from `settings-fields.ts` (which uses zod's names).
 */
function baseType(field: unknown): string {
  type Def = { type?: string; innerType?: unknown; in?: unknown };
  const zod = (field as { _zod?: { def?: Def } } | null | undefined)?._zod;
  if (zod === undefined) {
    const kind = (field as { kind?: unknown } | null | undefined)?.kind;
    return typeof kind === "string" ? kind : "unknown";
  }
  let def = zod.def;
  while (def && ["optional", "nullable", "default", "prefault", "pipe"].includes(def.type ?? "")) {
    const inner = def.type === "pipe" ? def.in : def.innerType;
    def = (inner as { _zod?: { def?: Def } })?._zod?.def;
  }
  return def?.type ?? "unknown";
}

/** Converts an environment string to the type a field expects (JSON for lists and maps). */
function parseEnvValue(raw: string, field: unknown): unknown {
  const type = baseType(field);
  const trimmed = raw.trim();
  switch (type) {
    case "number":
    case "int":
    case "bigint":
      return trimmed === "" ? raw : Number.isNaN(Number(trimmed)) ? raw : Number(trimmed);
    case "boolean": {
      const lower = trimmed.toLowerCase();
      if (["1", "true", "yes", "on"].includes(lower)) return true;
      if (["0", "false", "no", "off", ""].includes(lower)) return false;
      return raw;
    }
    case "object":
    case "record":
    case "array":
    case "tuple":
      if (trimmed === "null") return null;
      try {
        return JSON.parse(trimmed);
      } catch {
        return raw;
      }
    case "union":
      if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
        try {
          return JSON.parse(trimmed);
        } catch {
          return raw;
        }
      }
      return raw;
    default:
      return raw;
  }
}

function describeSource(source: Source): string {
  if (source.kind === "env") return `environment variable ${source.variable}`;
  if (source.kind === "file") return source.line ? `${source.file} line ${source.line}` : source.file;
  return "the default";
}

/**
 * Resolves settings sections: process environment over `.env` (already merged into the
 * environment) over the YAML config file over the schema's defaults. Instances are cached
 * per section until {@link Settings.reload}.
 */
export class Settings {
  readonly #sections = new Map<string, SettingsSection<unknown>>();
  readonly #schemas = new Map<string, SettingsSchema<unknown>>();
  readonly #cache = new Map<string, unknown>();
  /** {@link getValue} answers by path; cleared whenever a section's schema or value can change. */
  readonly #values = new Map<string, { readonly found: boolean; readonly value: unknown }>();
  #file: ConfigFile;
  #env: NodeJS.ProcessEnv;
  readonly #expand: boolean;

  /**
   * `expandReferences: false` keeps `${NAME}` references in the file's values as written
   * (see config-refs.ts); by default they are replaced from `env`.
   */
  constructor(file: ConfigFile, env: NodeJS.ProcessEnv = process.env, options: { expandReferences?: boolean } = {}) {
    this.#file = file;
    this.#env = env;
    this.#expand = options.expandReferences ?? true;
  }

  /** The config file in use. */
  get file(): ConfigFile {
    return this.#file;
  }

  /** Switches to another config file (clears every cached section). */
  reload(file: ConfigFile = this.#file, env: NodeJS.ProcessEnv = this.#env): void {
    this.#file = file;
    this.#env = env;
    this.#cache.clear();
    this.#values.clear();
  }

  /** Adds a section (a plugin's own, say). Registering the same id again replaces it. */
  register(section: SettingsSection<unknown>): void {
    this.#sections.set(section.id, section);
    this.#schemas.delete(section.id);
    this.#cache.delete(section.id);
    this.#values.clear();
  }

  /** Registered sections. */
  get sections(): readonly SettingsSection<unknown>[] {
    return [...this.#sections.values()];
  }

  async #schemaOf(section: SettingsSection<unknown>): Promise<SettingsSchema<unknown>> {
    let schema = this.#schemas.get(section.id);
    if (!schema) {
      schema = typeof section.schema === "function" ? await section.schema() : section.schema;
      this.#schemas.set(section.id, schema);
      this.#values.clear();
    }
    return schema;
  }

  /** Imports every lazily declared schema, so {@link get} can answer synchronously. */
  async prepare(): Promise<void> {
    for (const section of this.#sections.values()) await this.#schemaOf(section);
  }

  /** Resolves and validates a section (importing its schema if needed). */
  async load<T>(section: SettingsSection<T>): Promise<T> {
    if (!this.#sections.has(section.id)) this.register(section as SettingsSection<unknown>);
    await this.#schemaOf(this.#sections.get(section.id)!);
    return this.get(section);
  }

  /** Resolves a section whose schema is already loaded; throws {@link ConfigError} on bad values. */
  get<T>(section: SettingsSection<T> | string): T {
    const id = typeof section === "string" ? section : section.id;
    if (this.#cache.has(id)) return this.#cache.get(id) as T;
    const registered = this.#sections.get(id);
    if (!registered) throw new ConfigError(`Settings section '${id}' is not registered.`);
    const schema = this.#schemas.get(id);
    if (!schema) throw new ConfigError(`Settings section '${id}' is not loaded yet: await settings.load() or settings.prepare() first.`);
    const { values, sources } = this.#gather(registered, schema);
    const value = this.#parse(registered, schema, values, sources);
    this.#cache.set(id, value);
    return value as T;
  }

  #fileSection(section: SettingsSection<unknown>): Record<string, unknown> {
    if (section.section === null) return this.#file.data;
    const data = this.#file.data[section.section];
    return isRecord(data) ? data : {};
  }

  #gather(section: SettingsSection<unknown>, schema: SettingsSchema<unknown>) {
    const values: Record<string, unknown> = {};
    const sources = new Map<string, Source>();
    const prefixPath = section.section === null ? [] : [section.section];
    if (section.fromEnv) {
      for (const [key, value] of Object.entries(section.fromEnv(this.#env))) {
        values[key] = value;
        sources.set(key, { kind: "env", variable: `${section.envPrefix}*` });
      }
    }
    const fromFile = this.#fileSection(section);
    for (const key of Object.keys(schema.shape)) {
      const variable = section.envPrefix + key.toUpperCase();
      const raw = this.#env[variable];
      const fileValue = raw === undefined ? this.#fromFile(fromFile[key], schema.shape[key], [...prefixPath, key]) : fromFile[key];
      if (fileValue !== undefined) {
        values[key] = isRecord(values[key]) && isRecord(fileValue) ? { ...(values[key] as object), ...(fileValue as object) } : fileValue;
        sources.set(key, { kind: "file", file: this.#file.path, line: this.#file.lineOf([...prefixPath, key]) });
      }
      if (raw !== undefined) {
        values[key] = parseEnvValue(raw, schema.shape[key]);
        sources.set(key, { kind: "env", variable });
      }
    }
    return { values, sources };
  }

  /** A value from the file with its `${NAME}` references replaced; undefined when one names an unset variable. */
  #fromFile(value: unknown, field: unknown, path: readonly string[]): unknown {
    if (value === undefined || !this.#expand) return value;
    const { value: expanded, missing } = expandReferences(value, this.#env);
    if (missing.length > 0) {
      const line = this.#file.lineOf(path);
      log.warn(
        `'${path.join(".")}' in ${this.#file.path}${line ? ` line ${line}` : ""} refers to ${missing.map((name) => `\${${name}}`).join(", ")}, not set in the environment; ${expanded === undefined ? "the setting is ignored" : "the entries naming it are ignored"}. Set the variable or change the file.`,
      );
    }
    return isWholeReference(value) && typeof expanded === "string" ? parseEnvValue(expanded, field) : expanded;
  }

  #parse(section: SettingsSection<unknown>, schema: SettingsSchema<unknown>, values: Record<string, unknown>, sources: Map<string, Source>): unknown {
    const result = schema.safeParse(values);
    if (result.success) return result.data;
    const lines = result.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      const dotted = [section.section, ...issue.path.map(String)].filter(Boolean).join(".");
      const source = sources.get(key) ?? { kind: "default" };
      const got = key in values ? ` (got ${JSON.stringify(values[key])})` : "";
      return `'${dotted}' from ${describeSource(source)}: ${issue.message}${got}`;
    });
    const what = lines.length === 1 ? "Invalid setting" : "Invalid settings";
    throw new ConfigError(`${what} ${lines.join("; ")}. Fix the value or remove it to use the default.`, { issues: lines });
  }

  /**
   * Validates `data` (a whole config file's content) against every registered section,
   * ignoring the environment (`${NAME}` references are checked as the strings they are).
   * Returns `data` unchanged; throws {@link ConfigError}.
   */
  async validate(data: Record<string, unknown>, file = "config"): Promise<Record<string, unknown>> {
    const probe = new Settings({ path: file, data, lineOf: () => null }, {}, { expandReferences: false });
    for (const section of this.#sections.values()) {
      probe.register(section);
      probe.#schemas.set(section.id, await this.#schemaOf(section));
      probe.get(section.id);
    }
    return data;
  }

  /**
   * Reads a dotted path through the resolved settings (so the environment wins over the
   * file): `getValue("telegram.token")`, `getValue("model")`. Returns `fallback` when the
   * path is missing; throws when there is no fallback. Answers are remembered until a
   * section is registered, loaded or reloaded, so hot paths may call it per message.
   */
  getValue(path: string, ...fallback: [unknown?]): unknown {
    let known = this.#values.get(path);
    if (known === undefined) {
      known = this.#lookup(path);
      this.#values.set(path, known);
    }
    if (known.found) return known.value;
    if (fallback.length > 0) return fallback[0];
    throw new ConfigError(`No setting named '${path}'.`);
  }

  #lookup(path: string): { found: boolean; value: unknown } {
    const parts = path.split(".").filter(Boolean);
    if (parts.length === 0) throw new ConfigError("getValue needs a non-empty dotted path.");
    const candidates: { value: unknown; rest: string[] }[] = [];
    for (const section of this.#sections.values()) {
      if (!this.#schemas.has(section.id)) continue;
      if (section.section !== null && section.section === parts[0]) candidates.push({ value: this.get(section.id), rest: parts.slice(1) });
      else if (section.section === null) candidates.push({ value: this.get(section.id), rest: parts });
    }
    for (const { value, rest } of candidates) {
      let current: unknown = value;
      let found = true;
      for (const part of rest) {
        if (isRecord(current) && part in current) current = current[part];
        else {
          found = false;
          break;
        }
      }
      if (found) return { found: true, value: current };
    }
    return { found: false, value: undefined };
  }
}

/** Loads a `.env` file into `env` without overriding variables already set; a missing file is fine. */
export function loadDotEnv(file: string, env: NodeJS.ProcessEnv = process.env): void {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return;
  }
  for (const [key, value] of Object.entries(parseEnv(text))) if (env[key] === undefined) env[key] = value;
  refreshLogLevel();
}
