/**
 * A small schema builder for settings sections, for settings that do not need zod (zod's
 * classes and parsers cost a few milliseconds to warm up on every run). It covers the
 * value types settings use and reports problems with zod 4's English messages, so a
 * section may switch between the two without users seeing a difference.
 *
 * ```ts
 * const schema = settingsSchema({
 *   level: field.number().int().min(0).default(1),
 *   mode: field.enum(["fast", "slow"]).default("fast"),
 *   token: field.string().nullable().default(null),
 * });
 * type Mine = SettingsOf<typeof schema>; // { level: number; mode: "fast" | "slow"; token: string | null }
 * ```
 *
 * Like zod: a field without a default is required, unknown keys are dropped, defaults are
 * copied for every parse, and checks run in the order they were added.
 */
import type { SchemaIssue, SettingsSchema } from "./settings.ts";

/**
 * What a field holds. The names are zod's type names, which the settings store reads to
 * convert environment strings (numbers, booleans, JSON for arrays, records and unions).
 */
export type FieldKind = "string" | "number" | "boolean" | "enum" | "array" | "record" | "union";

/** One issue as a field reports it; the path is relative to the field. */
interface Issue extends SchemaIssue {
  readonly path: PropertyKey[];
}

/** Runs a check on a value the field's type test accepted (or, with `when`, on anything it says). */
interface Check {
  /** Run even after a failed type test when this holds (zod's length checks run on anything with a length). */
  readonly when?: (input: unknown) => boolean;
  /** Returns the problem found, if any; `abort` skips the checks after it. */
  readonly run: (input: never) => { readonly issue: Omit<SchemaIssue, "path">; readonly abort?: boolean } | undefined;
}

interface FieldDef {
  readonly kind: FieldKind;
  /** Tests the type and returns the output (a copy for arrays and records), adding issues on failure. */
  readonly parse: (input: unknown, issues: Issue[]) => unknown;
  readonly checks: readonly Check[];
  readonly nullable: boolean;
  /** What `null` becomes when nullable (only the JSON-object field turns it into `{}`). */
  readonly nullValue?: () => unknown;
  readonly default?: { readonly value: unknown };
}

/** Validates a field's value, adding issues with paths relative to the field; set in the class's static block, which can reach `#run`. */
let runField: <T>(field: SettingsField<T>, input: unknown, issues: Issue[]) => T;

/**
 * A settings field: its kind, whether it accepts `null`, its default and its checks.
 * Fields are immutable: each method returns a new field. Make them with {@link field}.
 */
export class SettingsField<T> {
  static {
    runField = (field, input, issues) => field.#run(input, issues);
  }

  readonly #def: FieldDef;

  /** @internal Use the {@link field} functions. */
  constructor(def: FieldDef) {
    this.#def = def;
  }

  /** What the field holds; the settings store converts environment strings by it. */
  get kind(): FieldKind {
    return this.#def.kind;
  }

  /** Accepts `null` as well. */
  nullable(): SettingsField<T | null> {
    return this.derive({ nullable: true });
  }

  /** The value used when the key is missing; objects and arrays are copied for every parse. */
  default(value: T): SettingsField<T> {
    return this.derive({ default: { value } });
  }

  /** A copy of this field (of the same class) with some of its definition replaced. */
  protected derive(changes: Partial<FieldDef>): this {
    return new (this.constructor as new (def: FieldDef) => this)({ ...this.#def, ...changes });
  }

  /** A copy of this field with one more check. */
  protected check(check: Check): this {
    return this.derive({ checks: [...this.#def.checks, check] });
  }

  #run(input: unknown, issues: Issue[]): T {
    const def = this.#def;
    if (input === undefined && def.default) return fresh(def.default.value) as T;
    if (input === null && def.nullable) return (def.nullValue ? def.nullValue() : null) as T;
    const before = issues.length;
    const output = def.parse(input, issues);
    // As in zod: a failed type test skips the checks, except those with `when`; a check's
    // issue lets the later checks run unless it aborts (a non-integer does), which skips all.
    let skip = issues.length > before;
    let aborted = false;
    for (const check of def.checks) {
      if (check.when ? aborted || !check.when(input) : skip) continue;
      const found = check.run(input as never);
      if (!found) continue;
      issues.push({ ...found.issue, path: [] });
      if (found.abort) skip = aborted = true;
    }
    return output as T;
  }
}

/** A string field; `min` counts characters (code points), as zod does. */
export class StringField extends SettingsField<string> {
  /** At least `length` characters; `message` replaces zod's wording. */
  min(length: number, message?: string): this {
    return this.check({
      when: (input) => input !== null && input !== undefined && (input as { length?: unknown }).length !== undefined,
      run: (input: { length: number }) => {
        const units = input.length;
        const size = typeof input === "string" && units >= length && units < length * 2 ? [...input].length : units;
        if (size >= length) return undefined;
        const origin = Array.isArray(input) ? "array" : typeof input === "string" ? "string" : "unknown";
        const unit = origin === "string" ? "characters" : origin === "array" ? "items" : null;
        const wording = unit ? `Too small: expected ${origin} to have >=${length} ${unit}` : `Too small: expected ${origin} to be >=${length}`;
        return { issue: { code: "too_small", message: message ?? wording } };
      },
    });
  }
}

/** A number field (finite; `NaN` and `Infinity` are refused, as zod does). */
export class NumberField extends SettingsField<number> {
  /** A whole number within the safe integer range. */
  int(message?: string): this {
    return this.check({
      run: (input: number) => {
        if (!Number.isInteger(input)) return { issue: { code: "invalid_type", expected: "int", message: message ?? invalidType("int", input) }, abort: true };
        if (Number.isSafeInteger(input)) return undefined;
        const wording = input > 0 ? `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}` : `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`;
        return { issue: { code: input > 0 ? "too_big" : "too_small", message: message ?? wording } };
      },
    });
  }

  /** Greater than 0. */
  positive(message?: string): this {
    return this.check(bound("too_small", 0, false, message));
  }

  /** At least `value`. */
  min(value: number, message?: string): this {
    return this.check(bound("too_small", value, true, message));
  }

  /** At most `value`. */
  max(value: number, message?: string): this {
    return this.check(bound("too_big", value, true, message));
  }
}

/** A `Record<string, unknown>` field (a JSON object); when nullable, `null` becomes `{}`. */
export class JsonObjectField extends SettingsField<Record<string, unknown>> {
  /** Accepts `null`, which becomes `{}`. */
  override nullable(): SettingsField<Record<string, unknown>> {
    return this.derive({ nullable: true, nullValue: () => ({}) });
  }
}

function bound(code: "too_small" | "too_big", limit: number, inclusive: boolean, message: string | undefined): Check {
  const relation = code === "too_small" ? (inclusive ? ">=" : ">") : inclusive ? "<=" : "<";
  const wording = `${code === "too_small" ? "Too small" : "Too big"}: expected number to be ${relation}${limit}`;
  return {
    run: (input: number) => {
      const ok = code === "too_small" ? (inclusive ? input >= limit : input > limit) : inclusive ? input <= limit : input < limit;
      return ok ? undefined : { issue: { code, message: message ?? wording } };
    },
  };
}

/** The name zod gives a value's type in "received …". */
function typeName(input: unknown): string {
  if (typeof input === "number") return Number.isNaN(input) ? "NaN" : Number.isFinite(input) ? "number" : String(input);
  if (typeof input !== "object") return typeof input;
  if (input === null) return "null";
  if (Array.isArray(input)) return "array";
  const constructor = (input as { constructor?: { name: string } }).constructor;
  if (Object.getPrototypeOf(input) !== Object.prototype && "constructor" in input && constructor) return constructor.name;
  return "object";
}

function invalidType(expected: string, input: unknown): string {
  return `Invalid input: expected ${expected}, received ${typeName(input)}`;
}

function typeIssue(expected: string, input: unknown): Issue {
  return { code: "invalid_type", expected, message: invalidType(expected, input), path: [] };
}

/** zod's plain-object test: not an array, and a plain prototype (or none). */
function isPlainObject(value: unknown): value is Record<PropertyKey, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const constructor = (value as { constructor?: unknown }).constructor;
  if (typeof constructor !== "function") return true;
  const prototype: unknown = constructor.prototype;
  if (typeof prototype !== "object" || prototype === null || Array.isArray(prototype)) return false;
  return Object.prototype.hasOwnProperty.call(prototype, "isPrototypeOf");
}

/** Adds the issues `found` under `key` to `issues`. */
function nest(issues: Issue[], key: PropertyKey, found: readonly Issue[]): void {
  for (const issue of found) issues.push({ ...issue, path: [key, ...issue.path] });
}

/** A copy of a default, so no two parses share a mutable value. */
function fresh(value: unknown): unknown {
  return typeof value === "object" && value !== null ? structuredClone(value) : value;
}

function parseString(input: unknown, issues: Issue[]): unknown {
  if (typeof input !== "string") issues.push(typeIssue("string", input));
  return input;
}

/** A record with string keys and values tested by `value` (`undefined`: anything). */
function parseRecord(input: unknown, issues: Issue[], value?: (input: unknown, issues: Issue[]) => unknown): unknown {
  if (!isPlainObject(input)) {
    issues.push(typeIssue("record", input));
    return input;
  }
  const output: Record<string, unknown> = {};
  for (const key of Reflect.ownKeys(input)) {
    if (key === "__proto__" || !Object.prototype.propertyIsEnumerable.call(input, key)) continue;
    if (typeof key === "symbol") {
      issues.push({ code: "invalid_key", message: "Invalid key in record", path: [key] });
      continue;
    }
    if (!value) {
      output[key] = input[key];
      continue;
    }
    const found: Issue[] = [];
    output[key] = value(input[key], found);
    nest(issues, key, found);
  }
  return output;
}

function parseStringRecord(input: unknown, issues: Issue[]): unknown {
  return parseRecord(input, issues, parseString);
}

function make<F extends SettingsField<unknown>>(Class: new (def: FieldDef) => F, kind: FieldKind, parse: FieldDef["parse"]): F {
  return new Class({ kind, parse, checks: [], nullable: false });
}

/** The field types a settings schema is built from. */
export const field = {
  /** A string. */
  string(): StringField {
    return make(StringField, "string", parseString);
  },

  /** A finite number; add `.int()`, `.positive()`, `.min()`, `.max()`. */
  number(): NumberField {
    return make(NumberField, "number", (input, issues) => {
      if (typeof input !== "number" || !Number.isFinite(input)) issues.push(typeIssue("number", input));
      return input;
    });
  },

  /** `true` or `false` (in the environment also `1`/`0`, `yes`/`no`, `on`/`off`). */
  boolean(): SettingsField<boolean> {
    return make<SettingsField<boolean>>(SettingsField, "boolean", (input, issues) => {
      if (typeof input !== "boolean") issues.push(typeIssue("boolean", input));
      return input;
    });
  },

  /** One of the given strings. */
  enum<const V extends readonly [string, ...string[]]>(values: V): SettingsField<V[number]> {
    const message =
      values.length === 1 ? `Invalid input: expected "${values[0]}"` : `Invalid option: expected one of ${values.map((value) => `"${value}"`).join("|")}`;
    return make<SettingsField<V[number]>>(SettingsField, "enum", (input, issues) => {
      if (!values.includes(input as string)) issues.push({ code: "invalid_value", message, path: [] });
      return input;
    });
  },

  /** A list of strings (in the environment, JSON). */
  stringArray(): SettingsField<string[]> {
    return make<SettingsField<string[]>>(SettingsField, "array", (input, issues) => {
      if (!Array.isArray(input)) {
        issues.push(typeIssue("array", input));
        return input;
      }
      return input.map((item: unknown, index) => {
        if (typeof item !== "string") issues.push({ ...typeIssue("string", item), path: [index] });
        return item;
      });
    });
  },

  /** A map of strings to strings (in the environment, JSON). */
  stringRecord(): SettingsField<Record<string, string>> {
    return make<SettingsField<Record<string, string>>>(SettingsField, "record", parseStringRecord);
  },

  /** Any JSON object (in the environment, JSON); `.nullable()` turns `null` into `{}`. */
  jsonObject(): JsonObjectField {
    return make(JsonObjectField, "record", (input, issues) => parseRecord(input, issues));
  },

  /** A string, or a map of strings to strings (in the environment, JSON when it starts with `{`). */
  stringOrStringRecord(): SettingsField<string | Record<string, string>> {
    return make<SettingsField<string | Record<string, string>>>(SettingsField, "union", (input, issues) => {
      if (typeof input === "string") return input;
      const found: Issue[] = [];
      const output = parseStringRecord(input, found);
      if (found.length > 0) issues.push({ code: "invalid_union", message: "Invalid input", path: [] });
      return output;
    });
  },
};

/** The fields of a settings schema, by key. */
export type FieldShape = Readonly<Record<string, SettingsField<unknown>>>;

/** The values of a shape's fields. */
export type ValuesOf<S extends FieldShape> = { -readonly [K in keyof S]: S[K] extends SettingsField<infer T> ? T : never };

/** The resolved settings a schema made with {@link settingsSchema} produces. */
export type SettingsOf<S> = S extends SettingsObject<infer Shape> ? ValuesOf<Shape> : never;

type ParseResult<T> = ReturnType<SettingsSchema<T>["safeParse"]>;

/** A settings schema: the fields by key, and `safeParse` as the settings store calls it. */
export class SettingsObject<S extends FieldShape> implements SettingsSchema<ValuesOf<S>> {
  readonly shape: S;

  constructor(shape: S) {
    this.shape = Object.freeze({ ...shape });
  }

  /** Validates an object: `data` has exactly the schema's keys (defaults filled in), or `error.issues` says what is wrong. */
  safeParse(value: unknown): ParseResult<ValuesOf<S>> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { success: false, error: { issues: [typeIssue("object", value)] } };
    const input = value as Record<string, unknown>;
    const data: Record<string, unknown> = {};
    const issues: Issue[] = [];
    for (const [key, item] of Object.entries(this.shape)) {
      const found: Issue[] = [];
      data[key] = runField(item, input[key], found);
      nest(issues, key, found);
    }
    if (issues.length > 0) return { success: false, error: { issues } };
    return { success: true, data: data as ValuesOf<S> };
  }
}

/** Builds a settings schema from fields; pass it to `defineSettings`. */
export function settingsSchema<const S extends FieldShape>(shape: S): SettingsObject<S> {
  return new SettingsObject(shape);
}
