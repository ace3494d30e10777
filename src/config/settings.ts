/**
 * The settings store, and the module the rest of the code imports the config layer from:
 * sections are declared in ../kernel/settings-contract.ts, values gathered in ./settings-sources.ts,
 * problems described in ./settings-problems.ts.
 */
import { ConfigError } from "./config-error.ts";
import { type ConfigFile } from "./config-data.ts";
import { isRecord } from "../kernel/guards.ts";
import type { SettingsSchema, SettingsSection, SettingsStore } from "../kernel/settings-contract.ts";
import { defaultIssueMessage, describeProblems, settingsError, type Problem } from "./settings-problems.ts";
import { gatherValues } from "./settings-sources.ts";
import { isZodObject } from "./zod-def.ts";

export { ConfigError } from "./config-error.ts";
export { emptyConfigFile, mergeConfig, type ConfigFile } from "./config-data.ts";
export { loadDotEnv } from "./dotenv.ts";
export { defineSettings, type SettingsOf, type SettingsSchema, type SettingsSection } from "../kernel/settings-contract.ts";

/** The outcome of resolving a section: its value, or one line per problem. */
type Resolved<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

/**
 * Resolves settings sections: process environment over `.env` (already merged into the
 * environment) over the YAML config file over the schema's defaults. Instances are cached
 * per section until {@link Settings.reload}. When a section does not validate, the error
 * lists the problems of every section whose schema is loaded, not just that one's.
 */
export class Settings implements SettingsStore {
  readonly #sections = new Map<string, SettingsSection<unknown>>();
  readonly #schemas = new Map<string, SettingsSchema>();
  /**
   * Per section id, the key this store files its resolved value under on the section (see
   * `SettingsValues`): a section's value is forgotten by dropping its key.
   */
  readonly #keys = new Map<string, object>();
  /** {@link getValue} answers by path; cleared whenever a section's schema or value can change. */
  readonly #values = new Map<string, { readonly found: boolean; readonly value: unknown }>();
  #file: ConfigFile;
  #env: NodeJS.ProcessEnv;
  #revision = 0;

  readonly #expand: boolean;
  readonly #warn: boolean;

  /**
   * `expandReferences: false` keeps `${NAME}` references in the file's values as written
   * (see config-refs.ts); by default they are replaced from `env`. `warnMissing: false`
   * does not log references to unset variables.
   */
  constructor(file: ConfigFile, env: NodeJS.ProcessEnv = process.env, options: { expandReferences?: boolean; warnMissing?: boolean } = {}) {
    this.#file = file;
    this.#env = env;
    this.#expand = options.expandReferences ?? true;
    this.#warn = options.warnMissing ?? true;
  }

  /** The config file in use. */
  get file(): ConfigFile {
    return this.#file;
  }

  /** Grows whenever a section is registered, loaded for the first time or reloaded: what was read before may be stale. */
  get revision(): number {
    return this.#revision;
  }

  #changed(): void {
    this.#values.clear();
    this.#revision++;
  }

  /** Switches to another config file (clears every cached section). */
  reload(file: ConfigFile = this.#file, env: NodeJS.ProcessEnv = this.#env): void {
    this.#file = file;
    this.#env = env;
    this.#keys.clear();
    this.#changed();
  }

  /** Adds a section (a plugin's own, say). Registering the same id again replaces it. */
  register(section: SettingsSection<unknown>): void {
    this.#sections.set(section.id, section);
    this.#schemas.delete(section.id);
    this.#keys.delete(section.id);
    this.#changed();
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
      if (typeof section.values !== "object" || section.values === null) throw new ConfigError(`Settings section '${section.id}' must be declared with defineSettings().`);
      schema = loaded;
      this.#schemas.set(section.id, schema);
      this.#changed();
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
    // Resolved before and unchanged since (registering or reloading forgets it): hot paths load per turn.
    const cached = this.#cached(section);
    if (cached) return cached.value;
    let registered = this.#sections.get(section.id);
    if (!registered) {
      this.register(section);
      registered = section;
    }
    await this.#schemaOf(registered);
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

  /**
   * Resolves a section whose schema is already loaded; throws {@link ConfigError} listing
   * every problem. The value is the section's own schema's output, remembered on the section.
   */
  get<T>(section: SettingsSection<T>): T {
    const id = section.id;
    const cached = this.#cached(section);
    if (cached) return cached.value;
    if (!this.#sections.has(id)) throw new ConfigError(`Settings section '${id}' is not registered.`);
    const schema = this.#schemas.get(id);
    if (!schema) throw new ConfigError(`Settings section '${id}' is not loaded yet: await settings.load() or settings.prepare() first.`);
    const resolved = this.#resolve(section, schema);
    if (resolved.ok) return resolved.value;
    throw settingsError(this.#allProblems());
  }

  #keyOf(id: string): object {
    let key = this.#keys.get(id);
    if (!key) this.#keys.set(id, (key = {}));
    return key;
  }

  #cached<T>(section: SettingsSection<T>): { readonly value: T } | undefined {
    const key = this.#keys.get(section.id);
    return key ? section.values.get(key) : undefined;
  }

  /** Every problem of every section whose schema is loaded, in registration order, without repeats. */
  #allProblems(): string[] {
    const problems: Problem[] = [];
    for (const section of this.#sections.values()) {
      const schema = this.#schemas.get(section.id);
      if (!schema || this.#cached(section)) continue;
      const resolved = this.#resolve(section, schema);
      if (!resolved.ok) for (const problem of resolved.problems) if (!problems.some((known) => known.text === problem.text)) problems.push(problem);
    }
    return problems.sort((a, b) => a.rank - b.rank).map((problem) => problem.text);
  }

  /** Gathers and checks a section's values; remembers them (on the section) when they pass. */
  #resolve<T>(section: SettingsSection<T>, schema: SettingsSchema): Resolved<T> {
    const { values, sources } = gatherValues(section, schema, { file: this.#file, env: this.#env, expand: this.#expand, warn: this.#warn });
    const result = section.values.parse(values, { error: defaultIssueMessage });
    if (result.success) {
      section.values.set(this.#keyOf(section.id), result.data);
      return { ok: true, value: result.data };
    }
    return { ok: false, problems: describeProblems(section, schema, result.error.issues, values, sources, this.#file.path) };
  }

  /**
   * Validates `data` (a whole config file's content) against every registered section,
   * ignoring the environment. Returns `data` unchanged; throws one {@link ConfigError}
   * listing every problem.
   */
  async validate(data: Record<string, unknown>, file = "config"): Promise<Record<string, unknown>> {
    // The data alone, without the environment; its `${NAME}` references are resolved at run
    // time, so one to a variable unset here is not worth a warning.
    const probe = new Settings({ path: file, data, lineOf: () => null }, {}, { warnMissing: false });
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
      if (section.section !== null && section.section === parts[0]) candidates.push({ value: this.get(section), rest: parts.slice(1) });
      else if (section.section === null) candidates.push({ value: this.get(section), rest: parts });
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
