import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import type { z } from "zod";
import { BubError } from "../kernel/errors.ts";
import { createLogger, refreshLogLevel } from "../kernel/log.ts";
import { expandReferences, isWholeReference } from "./config-refs.ts";

const log = createLogger("bub:config");

/**
 * A settings group's schema: a zod 4 object schema (`z.object({...})`). Its keys are the
 * setting names; each key `k` is read from the env variable `<prefix><K>`, then from
 * `config.yml`, then from the schema's `.default(...)`.
 *
 * This module imports zod for types only: it talks to schemas through their own methods,
 * so a command that never resolves settings never loads zod.
 */
export type SettingsSchema = z.ZodObject<z.core.$ZodShape, z.core.$ZodObjectConfig>;

/** The resolved settings a schema produces (`z.output` of it). */
export type SettingsOf<S extends SettingsSchema> = z.output<S>;

declare const resolvedType: unique symbol;

/** A group of settings: a YAML section (or the root), an env prefix and a zod schema. */
export interface SettingsSection<T = Record<string, unknown>> {
  /** Section name in `config.yml`; `null` for keys at the root (the agent and channel settings). */
  readonly section: string | null;
  /** Identifies the section for {@link Settings.get}. Defaults to `section`. */
  readonly id: string;
  /** Environment prefix, e.g. `BUB_` (root) or `BUB_TELEGRAM_`. */
  readonly envPrefix: string;
  /** The schema, or a function that imports it when the settings are first needed. */
  readonly schema: SettingsSchema | (() => SettingsSchema | Promise<SettingsSchema>);
  /** Extra values derived from the environment, below the YAML file in precedence. */
  readonly fromEnv?: (env: NodeJS.ProcessEnv) => Record<string, unknown>;
  /** Type only: what {@link Settings.get} returns for this section. */
  readonly [resolvedType]?: T;
}

/**
 * Declares a settings section from a zod object schema; the resolved type is inferred.
 *
 * ```ts
 * const mine = defineSettings({ section: "mine", schema: z.object({ level: z.number().int().default(1) }) });
 * framework.settings.register(mine);
 * (await framework.settings.load(mine)).level; // env BUB_MINE_LEVEL, then `mine.level` in config.yml, then 1
 * ```
 *
 * The schema may also be a function returning it (or a promise of it), so that zod and the
 * schema load only when the section is first resolved; name the schema's type then:
 * `defineSettings<typeof mineSchema>({ section: "mine", schema: async () => (await import("./schema.ts")).mineSchema })`.
 */
export function defineSettings<S extends SettingsSchema>(options: {
  id?: string;
  section: string | null;
  envPrefix?: string;
  schema: S | (() => S | Promise<S>);
  fromEnv?: (env: NodeJS.ProcessEnv) => Record<string, unknown>;
}): SettingsSection<z.output<S>> {
  const id = options.id ?? options.section ?? "root";
  const envPrefix = options.envPrefix ?? (options.section ? `BUB_${options.section.toUpperCase()}_` : "BUB_");
  return { id, section: options.section, envPrefix, schema: options.schema, fromEnv: options.fromEnv };
}

/** The environment variable a setting is read from: the section's prefix and the key upper-cased. */
export function envVariable(section: Pick<SettingsSection<unknown>, "envPrefix">, key: string): string {
  return section.envPrefix + key.toUpperCase();
}

/** Where a value came from, for error messages. */
type Source = { kind: "env"; variable: string; raw: string } | { kind: "file"; file: string; line: number | null } | { kind: "default" };

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

/**
 * A problem with the configuration. For invalid settings the message lists every problem
 * (`details.issues`, one line each: the variable or key, the bad value, what is allowed).
 */
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

// ---------------------------------------------------------------------------------------
// Environment strings to values, by the zod type of the field.

type ZodDef = { type?: string; innerType?: unknown; in?: unknown; element?: unknown; options?: readonly unknown[] };

function defOf(schema: unknown): ZodDef | undefined {
  return (schema as { _zod?: { def?: ZodDef } } | null | undefined)?._zod?.def;
}

/** The def under optional/nullable/default/pipe wrappers. */
function baseDef(schema: unknown): ZodDef | undefined {
  let def = defOf(schema);
  while (def && ["optional", "nullable", "default", "prefault", "nonoptional", "readonly", "catch", "pipe"].includes(def.type ?? "")) {
    def = defOf(def.type === "pipe" ? def.in : def.innerType);
  }
  return def;
}

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

// ---------------------------------------------------------------------------------------
// Validation problems in plain words.

/** A JSON Schema node, as zod's `toJSONSchema` writes it. */
type JsonSchema = {
  type?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  pattern?: string;
};

/** The JSON schema of a section (input side), or null when zod cannot write one. */
function jsonSchemaOf(schema: SettingsSchema): JsonSchema | null {
  try {
    return schema.toJSONSchema({ io: "input", unrepresentable: "any" }) as JsonSchema;
  } catch {
    return null;
  }
}

function childSchema(node: JsonSchema | null | undefined, key: PropertyKey): JsonSchema | null {
  if (!node) return null;
  for (const branch of node.anyOf ?? node.oneOf ?? []) {
    const child = childSchema(branch, key);
    if (child) return child;
  }
  if (node.properties && typeof key === "string" && node.properties[key]) return node.properties[key]!;
  if (typeof key === "number" && node.items) return node.items;
  if (isRecord(node.additionalProperties)) return node.additionalProperties as JsonSchema;
  return null;
}

function bound(value: unknown): number | undefined {
  return typeof value === "number" && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined;
}

function numberText(node: JsonSchema): string {
  const base = node.type === "integer" ? "a whole number" : "a number";
  const [min, max, above, below] = [bound(node.minimum), bound(node.maximum), bound(node.exclusiveMinimum), bound(node.exclusiveMaximum)];
  if (min !== undefined && max !== undefined) return `${base} from ${min} to ${max}`;
  const parts: string[] = [];
  if (above !== undefined) parts.push(`greater than ${above}`);
  else if (min !== undefined) parts.push(`of ${min} or more`);
  if (below !== undefined) parts.push(`less than ${below}`);
  else if (max !== undefined) parts.push(`of ${max} or less`);
  return parts.length === 0 ? base : `${base} ${parts.join(" and ")}`;
}

function stringText(node: JsonSchema): string {
  if (node.format === "uri" || node.format === "url") return "a URL";
  if (node.format === "email") return "an email address";
  if (node.format) return `a string in ${node.format} format`;
  if (node.pattern) return `a string matching /${node.pattern}/`;
  const { minLength: min, maxLength: max } = node;
  if (min !== undefined && max !== undefined) return `a string of ${min} to ${max} characters`;
  if (min === 1) return "a non-empty string";
  if (min !== undefined) return `a string of at least ${min} characters`;
  if (max !== undefined) return `a string of at most ${max} characters`;
  return "a string";
}

const PLURALS: Record<string, string> = { "a string": "strings", "a number": "numbers", "a whole number": "whole numbers", "true or false": "true/false values" };

/** What a JSON schema node allows, in words ("a whole number greater than 0"), or null. */
function allowedText(node: JsonSchema | null | undefined): string | null {
  if (!node || typeof node !== "object") return null;
  const branches = node.anyOf ?? node.oneOf;
  if (branches) {
    const parts: string[] = [];
    for (const branch of branches) {
      if (branch.type === "null") continue;
      const text = allowedText(branch);
      if (text === null) return null;
      if (!parts.includes(text)) parts.push(text);
    }
    return parts.length > 0 ? parts.join(" or ") : null;
  }
  if (Array.isArray(node.enum)) return `one of ${node.enum.map((value) => (typeof value === "string" ? value : JSON.stringify(value))).join(", ")}`;
  if ("const" in node) return JSON.stringify(node.const);
  switch (node.type) {
    case "integer":
    case "number":
      return numberText(node);
    case "string":
      return stringText(node);
    case "boolean":
      return "true or false";
    case "array": {
      const item = allowedText(node.items);
      if (item === null) return "a list";
      return PLURALS[item] ? `a list of ${PLURALS[item]}` : `a list (each ${item})`;
    }
    case "object": {
      if (node.properties && Object.keys(node.properties).length > 0) return `a mapping with the keys ${Object.keys(node.properties).join(", ")}`;
      const value = isRecord(node.additionalProperties) ? allowedText(node.additionalProperties as JsonSchema) : null;
      return value && PLURALS[value] ? `a mapping of names to ${PLURALS[value]}` : "a mapping (key: value)";
    }
    default:
      return null;
  }
}

/** Marks the messages zod made up itself (no message given in the schema). */
const DEFAULT_MESSAGE = "\u0000";
/** Issue codes whose problem is the value's type or range, which the schema describes. */
const DESCRIBED = new Set(["invalid_type", "too_small", "too_big", "invalid_value", "invalid_format", "invalid_union"]);

type RawIssue = { code?: string; expected?: string; origin?: string; minimum?: unknown; maximum?: unknown; inclusive?: boolean; values?: unknown[]; format?: string; keys?: string[]; input?: unknown };

/** zod's issue in a few words, for when the schema cannot describe what it allows. */
function issueText(issue: RawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}`;
    case "too_small":
      return `expected ${issue.origin ?? "a value"} ${issue.inclusive ? "of at least" : "greater than"} ${String(issue.minimum)}`;
    case "too_big":
      return `expected ${issue.origin ?? "a value"} ${issue.inclusive ? "of at most" : "less than"} ${String(issue.maximum)}`;
    case "invalid_value":
      return `expected one of ${(issue.values ?? []).map(String).join(", ")}`;
    case "invalid_format":
      return `expected the ${issue.format} format`;
    case "unrecognized_keys":
      return `has unknown keys: ${(issue.keys ?? []).join(", ")}`;
    case "invalid_union":
      return "matches none of the allowed forms";
    default:
      return "is not valid";
  }
}

function isSecret(path: readonly PropertyKey[]): boolean {
  return path.some((part) => typeof part === "string" && /(^|_)(token|key|secret|password)$|secret|password/i.test(part));
}

function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function shownEnv(raw: string): string {
  if (raw.trim() === "" || /\s/.test(raw)) return JSON.stringify(raw.length > 60 ? `${raw.slice(0, 57)}...` : raw);
  return raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
}

function valueAt(values: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let current: unknown = values;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

/** The outcome of resolving a section: its value, or one line per problem. */
type Resolved = { ok: true; value: unknown } | { ok: false; problems: Problem[] };

/** One problem's line, and where it sorts: environment first, then the file by line, then missing keys. */
type Problem = { readonly text: string; readonly rank: number };

/** The one error for every problem found, each on its own line. */
function settingsError(problems: readonly string[]): ConfigError {
  if (problems.length === 1) return new ConfigError(`invalid setting ${problems[0]} — fix it, or remove it to use the default`, { issues: [...problems] });
  const list = problems.map((problem) => `\n  - ${problem}`).join("");
  return new ConfigError(`${problems.length} invalid settings — fix them, or remove them to use the defaults:${list}`, { issues: [...problems] });
}

function isZodObject(schema: unknown): schema is SettingsSchema {
  return typeof (schema as { safeParse?: unknown } | null)?.safeParse === "function" && defOf(schema)?.type === "object";
}

/**
 * Resolves settings sections: process environment over `.env` (already merged into the
 * environment) over the YAML config file over the schema's defaults. Instances are cached
 * per section until {@link Settings.reload}. When a section does not validate, the error
 * lists the problems of every section whose schema is loaded, not just that one's.
 */
export class Settings {
  readonly #sections = new Map<string, SettingsSection<unknown>>();
  readonly #schemas = new Map<string, SettingsSchema>();
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

  async #schemaOf(section: SettingsSection<unknown>): Promise<SettingsSchema> {
    let schema = this.#schemas.get(section.id);
    if (!schema) {
      const loaded: unknown = typeof section.schema === "function" ? await section.schema() : section.schema;
      if (!isZodObject(loaded)) throw new ConfigError(`Settings section '${section.id}' needs a zod object schema (z.object({...})) from zod 4.`);
      schema = loaded;
      this.#schemas.set(section.id, schema);
      this.#values.clear();
    }
    return schema;
  }

  /** Imports every lazily declared schema, so {@link get} can answer synchronously. */
  async prepare(): Promise<void> {
    for (const section of this.#sections.values()) await this.#schemaOf(section);
  }

  /**
   * Resolves and validates a section (importing its schema if needed). When it does not
   * validate, every registered schema is imported so that the error reports the problems
   * of all sections at once.
   */
  async load<T>(section: SettingsSection<T>): Promise<T> {
    if (!this.#sections.has(section.id)) this.register(section as SettingsSection<unknown>);
    await this.#schemaOf(this.#sections.get(section.id)!);
    try {
      return this.get(section);
    } catch (error) {
      if (!(error instanceof ConfigError) || error.details?.issues === undefined) throw error;
      try {
        await this.prepare();
      } catch {
        throw error; // a schema that fails to import: report what is known
      }
      throw settingsError(this.#allProblems());
    }
  }

  /** Resolves a section whose schema is already loaded; throws {@link ConfigError} listing every problem. */
  get<T>(section: SettingsSection<T> | string): T {
    const id = typeof section === "string" ? section : section.id;
    if (this.#cache.has(id)) return this.#cache.get(id) as T;
    const registered = this.#sections.get(id);
    if (!registered) throw new ConfigError(`Settings section '${id}' is not registered.`);
    if (!this.#schemas.has(id)) throw new ConfigError(`Settings section '${id}' is not loaded yet: await settings.load() or settings.prepare() first.`);
    const resolved = this.#resolve(registered);
    if (resolved.ok) {
      this.#cache.set(id, resolved.value);
      return resolved.value as T;
    }
    throw settingsError(this.#allProblems());
  }

  /** Every problem of every section whose schema is loaded, in registration order, without repeats. */
  #allProblems(): string[] {
    const problems: Problem[] = [];
    for (const section of this.#sections.values()) {
      if (!this.#schemas.has(section.id) || this.#cache.has(section.id)) continue;
      const resolved = this.#resolve(section);
      if (resolved.ok) this.#cache.set(section.id, resolved.value);
      else for (const problem of resolved.problems) if (!problems.some((known) => known.text === problem.text)) problems.push(problem);
    }
    return problems.sort((a, b) => a.rank - b.rank).map((problem) => problem.text);
  }

  #resolve(section: SettingsSection<unknown>): Resolved {
    const schema = this.#schemas.get(section.id)!;
    const { values, sources } = this.#gather(section, schema);
    const result = schema.safeParse(values, { error: (issue) => DEFAULT_MESSAGE + issueText(issue as RawIssue) });
    if (result.success) return { ok: true, value: result.data };
    return { ok: false, problems: this.#describe(section, schema, result.error.issues, values, sources) };
  }

  #fileSection(section: SettingsSection<unknown>): Record<string, unknown> {
    if (section.section === null) return this.#file.data;
    const data = this.#file.data[section.section];
    return isRecord(data) ? data : {};
  }

  #gather(section: SettingsSection<unknown>, schema: SettingsSchema) {
    const values: Record<string, unknown> = {};
    const sources = new Map<string, Source>();
    const prefixPath = section.section === null ? [] : [section.section];
    if (section.fromEnv) {
      for (const [key, value] of Object.entries(section.fromEnv(this.#env))) {
        values[key] = value;
        sources.set(key, { kind: "env", variable: `${section.envPrefix}*`, raw: shown(value) });
      }
    }
    const fromFile = this.#fileSection(section);
    for (const key of Object.keys(schema.shape)) {
      const variable = envVariable(section, key);
      const raw = this.#env[variable];
      const fileValue = raw === undefined ? this.#fromFile(fromFile[key], schema.shape[key], [...prefixPath, key]) : fromFile[key];
      if (fileValue !== undefined) {
        values[key] = isRecord(values[key]) && isRecord(fileValue) ? { ...(values[key] as object), ...(fileValue as object) } : fileValue;
        sources.set(key, { kind: "file", file: this.#file.path, line: this.#file.lineOf([...prefixPath, key]) });
      }
      if (raw !== undefined) {
        values[key] = parseEnvValue(raw, schema.shape[key]);
        sources.set(key, { kind: "env", variable, raw });
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

  /** One line per problem: where the value came from, the value, and what is allowed. */
  #describe(section: SettingsSection<unknown>, schema: SettingsSchema, issues: readonly z.core.$ZodIssue[], values: Record<string, unknown>, sources: Map<string, Source>): Problem[] {
    let json: JsonSchema | null | undefined;
    const byPath = new Map<string, { path: readonly PropertyKey[]; texts: string[] }>();
    for (const issue of issues) {
      const path = issue.path;
      let text = issue.message;
      if (text.startsWith(DEFAULT_MESSAGE)) {
        text = text.slice(DEFAULT_MESSAGE.length);
        if (DESCRIBED.has(issue.code)) {
          json ??= jsonSchemaOf(schema);
          const allowed = allowedText(path.reduce<JsonSchema | null>((node, key) => childSchema(node, key), json));
          if (allowed) text = `expected ${allowed}`;
        }
      }
      const dotted = path.map(String).join(".");
      const entry = byPath.get(dotted) ?? { path, texts: [] };
      if (!entry.texts.includes(text)) entry.texts.push(text);
      byPath.set(dotted, entry);
    }
    const lines: Problem[] = [];
    for (const { path, texts } of byPath.values()) {
      const key = String(path[0] ?? "");
      const source = sources.get(key) ?? { kind: "default" };
      const name = [section.section, ...path.map(String)].filter((part) => part !== null && part !== "").join(".");
      const value = valueAt(values, path);
      const secret = isSecret(path);
      const what = texts.join("; ");
      if (source.kind === "env") {
        const inner = path.length > 1 ? ` (at ${path.slice(1).map(String).join(".")})` : "";
        lines.push({ text: `${source.variable}=${secret ? "(hidden)" : shownEnv(source.raw)}${inner}: ${what}`, rank: 0 });
      } else if (value === undefined) {
        const variable = path.length === 1 ? `${envVariable(section, key)} or ` : "";
        lines.push({ text: `${name} is missing (set ${variable}${name} in ${this.#file.path}): ${what}`, rank: 2e9 });
      } else {
        const where = source.kind === "file" ? ` (${source.file}${source.line ? ` line ${source.line}` : ""})` : "";
        lines.push({ text: `${name}: ${secret ? "(hidden)" : shown(value)}${where}: ${what}`, rank: source.kind === "file" ? (source.line ?? 1e9) : 1e9 });
      }
    }
    return lines;
  }

  /**
   * Validates `data` (a whole config file's content) against every registered section,
   * ignoring the environment. Returns `data` unchanged; throws one {@link ConfigError}
   * listing every problem.
   */
  async validate(data: Record<string, unknown>, file = "config"): Promise<Record<string, unknown>> {
    const probe = new Settings({ path: file, data, lineOf: () => null }, {});
    for (const section of this.#sections.values()) {
      probe.register(section);
      probe.#schemas.set(section.id, await this.#schemaOf(section));
    }
    const problems = probe.#allProblems();
    if (problems.length > 0) throw settingsError(problems);
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
