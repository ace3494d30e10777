/**
 * What the kernel and plugins know of settings: how a group of settings is declared (a YAML
 * section or the root, an environment prefix and a zod object schema) and the store that
 * resolves them. The store is implemented outside the kernel (`src/config/settings.ts`) and
 * passed in by the composition root.
 */
import type { z } from "zod";
import { isRecord } from "./guards.ts";

/**
 * A settings group's schema: a zod 4 object schema (`z.object({...})`). Its keys are the
 * setting names; each key `k` is read from the env variable `<prefix><K>`, then from
 * `config.yml`, then from the schema's `.default(...)`.
 *
 * The config modules import zod for types only: they talk to schemas through their own
 * methods, so a command that never resolves settings never loads zod.
 */
export type SettingsSchema = z.ZodObject<z.core.$ZodShape, z.core.$ZodObjectConfig>;

/** The resolved settings a schema produces (`z.output` of it). */
export type SettingsOf<S extends SettingsSchema> = z.output<S>;

declare const resolvedType: unique symbol;

/** A group of settings: a YAML section (or the root), an env prefix and a zod schema. */
export interface SettingsSection<T = Record<string, unknown>> {
  /** Section name in `config.yml`; `null` for keys at the root (the agent and channel settings). */
  readonly section: string | null;
  /** Identifies the section for {@link SettingsStore.get}. Defaults to `section`. */
  readonly id: string;
  /** Environment prefix, e.g. `BUB_` (root) or `BUB_TELEGRAM_`. */
  readonly envPrefix: string;
  /** The schema, or a function that imports it when the settings are first needed. */
  readonly schema: SettingsSchema | (() => SettingsSchema | Promise<SettingsSchema>);
  /** Extra values derived from the environment, below the YAML file in precedence. */
  readonly fromEnv?: (env: NodeJS.ProcessEnv) => Record<string, unknown>;
  /** The section's typed values: made by {@link defineSettings}, filled by the store. */
  readonly values: SettingsValues<T>;
  /** Type only: what {@link SettingsStore.get} returns for this section. */
  readonly [resolvedType]?: T;
}

/**
 * The typed side of a section, made by {@link defineSettings}: it checks values with the
 * section's own schema, so what passes has the section's type, and keeps what each store
 * resolved (under a key object of the store's; a store takes a new key to forget a value).
 */
export interface SettingsValues<T> {
  /** Checks `values` against the schema the section's `schema` gave last. */
  parse(values: unknown, params?: z.core.ParseContext<z.core.$ZodIssue>): z.ZodSafeParseResult<T>;
  /** What the store holding `key` resolved, if it did. */
  get(key: object): { readonly value: T } | undefined;
  /** Records what the store holding `key` resolved. */
  set(key: object, value: T): void;
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
  const declared = options.schema;
  // The schema as last loaded, kept with its type for `values.parse` (the store loads it).
  let loaded: S | undefined;
  const schema = isLoader(declared) ? async () => (loaded = await declared()) : (loaded = declared);
  const resolved = new WeakMap<object, { readonly value: z.output<S> }>();
  const values: SettingsValues<z.output<S>> = {
    parse(input, params) {
      if (!loaded) throw new Error(`settings section '${id}' was parsed before its schema was loaded`);
      return loaded.safeParse(input, params);
    },
    get: (key) => resolved.get(key),
    set: (key, value) => void resolved.set(key, { value }),
  };
  return { id, section: options.section, envPrefix, schema, fromEnv: options.fromEnv, values };
}

function isLoader<S extends SettingsSchema>(schema: S | (() => S | Promise<S>)): schema is () => S | Promise<S> {
  return typeof schema === "function";
}

/** The environment variable a setting is read from: the section's prefix and the key upper-cased. */
export function envVariable(section: Pick<SettingsSection<unknown>, "envPrefix">, key: string): string {
  return section.envPrefix + key.toUpperCase();
}

/** The parsed config file: its data and where each key path sits. */
export interface ConfigFile {
  readonly path: string;
  readonly data: Record<string, unknown>;
  /** 1-based line of a dotted key path, when known. */
  lineOf(path: readonly PropertyKey[]): number | null;
}

/**
 * Resolves settings sections (environment over `config.yml` over the schema's defaults) and
 * reports every problem at once.
 */
export interface SettingsStore {
  /** The config file in use. */
  readonly file: ConfigFile;
  /** Declares a section, so that validation and `getValue` know it. */
  register(section: SettingsSection<unknown>): void;
  /** Resolves and validates a section, importing its schema if it is declared lazily. */
  load<T>(section: SettingsSection<T>): Promise<T>;
  /** Resolves a section whose schema is loaded (see {@link prepare}); {@link getValue} reads by name. */
  get<T>(section: SettingsSection<T>): T;
  /** Imports every lazily declared schema, so {@link get} and {@link getValue} answer at once. */
  prepare(): Promise<void>;
  /** A dotted path through the resolved settings (`"telegram.token"`); `fallback` when missing, else it throws. */
  getValue(path: string, ...fallback: [unknown?]): unknown;
  /** Grows whenever what the store answers may have changed (sections registered, loaded or reloaded). */
  readonly revision?: number;
  /** Checks a whole config file's content against every registered section; answers it unchanged. */
  validate(data: Record<string, unknown>, file?: string): Promise<Record<string, unknown>>;
}

/** Deep-merges `updates` into `base` in place (incoming values win; nested objects merged). */
export function mergeConfig(base: Record<string, unknown>, ...updates: readonly (Record<string, unknown> | null | undefined)[]): Record<string, unknown> {
  for (const update of updates) {
    if (!update) continue;
    for (const [key, value] of Object.entries(update)) {
      const current = base[key];
      if (isRecord(value) && isRecord(current)) mergeConfig(current, value);
      else base[key] = isRecord(value) || Array.isArray(value) ? structuredClone(value) : value;
    }
  }
  return base;
}
