import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { z } from "zod";
import { field, settingsSchema, type SettingsField, type SettingsOf } from "../../src/kernel/settings-fields.ts";
import { ConfigError, Settings, defineSettings, emptyConfigFile, type SchemaIssue, type SettingsSchema } from "../../src/kernel/settings.ts";
import { agentSchema, channelSchema, spillSchema } from "../../src/builtin/schemas.ts";
import type { AgentSettings, ChannelSettings, SpillSettings } from "../../src/builtin/settings.ts";

// Compile-time checks: the inferred settings types are what the zod schemas gave.
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
const typeChecks: [
  Equal<
    AgentSettings,
    {
      model: string;
      fallback_models: string[] | null;
      api_key: string | Record<string, string> | null;
      api_base: string | Record<string, string> | null;
      max_steps: number | null;
      max_tokens: number;
      model_timeout_seconds: number | null;
      client_args: Record<string, unknown>;
      completion_args: Record<string, unknown>;
      verbose: number;
    }
  >,
  Equal<
    ChannelSettings,
    {
      enabled_channels: string;
      debounce_seconds: number;
      max_wait_seconds: number;
      active_time_window: number;
      stream_output: boolean;
      admission: "concurrent" | "follow_up" | "steer";
      tape_store: "file" | "sqlite";
      tape_dsn: string | null;
    }
  >,
  Equal<SpillSettings, { threshold: number }>,
  Equal<SettingsOf<ReturnType<typeof settingsSchema<{ a: SettingsField<"x" | "y">; b: SettingsField<string[] | null> }>>>, { a: "x" | "y"; b: string[] | null }>,
] = [true, true, true, true];
void typeChecks;

/** The builtin schemas as they were written with zod; the reference for messages and results. */
const zodStringOrMap = z.union([z.string(), z.record(z.string(), z.string())]).nullable().default(null);
const zodJsonObject = z.record(z.string(), z.unknown()).nullable().transform((value) => value ?? {}).default({});
const zodAgent = z.object({
  model: z.string().min(1, "expected a provider:model id such as openrouter:openrouter/free").default("openrouter:openrouter/free"),
  fallback_models: z.array(z.string()).nullable().default(null),
  api_key: zodStringOrMap,
  api_base: zodStringOrMap,
  max_steps: z.number().int().positive("expected a whole number greater than 0").nullable().default(null),
  max_tokens: z.number().int().positive().default(16384),
  model_timeout_seconds: z.number().positive().nullable().default(null),
  client_args: zodJsonObject,
  completion_args: zodJsonObject,
  verbose: z.number().int().min(0).max(2).default(0),
});
const zodChannel = z.object({
  enabled_channels: z.string().default("all"),
  debounce_seconds: z.number().min(0).default(1.0),
  max_wait_seconds: z.number().min(0).default(10.0),
  active_time_window: z.number().min(0).default(60.0),
  stream_output: z.boolean().default(false),
  admission: z.enum(["concurrent", "follow_up", "steer"]).default("concurrent"),
  tape_store: z.enum(["file", "sqlite"]).default("file"),
  tape_dsn: z.string().nullable().default(null),
});
const zodSpill = z.object({ threshold: z.number().int().min(0).default(4096) });

class Custom {
  readonly x = 1;
}
const withSymbol = { a: "b", [Symbol("s")]: "c" };
const withLength = { length: 0 };

/** Values of every type zod tells apart, plus the edge cases of each check. */
const samples: unknown[] = [
  undefined,
  null,
  "",
  "x",
  "openai:gpt-4o",
  "😀",
  0,
  -0,
  1,
  2,
  3,
  -1,
  0.5,
  1.5,
  -1.5,
  2.5,
  5.5,
  NaN,
  Infinity,
  -Infinity,
  2 ** 60,
  -(2 ** 60),
  true,
  false,
  [],
  ["a"],
  ["a", 1, "b", null],
  {},
  { a: "b" },
  { a: 1, b: "c", d: null },
  { nested: { deep: [1] } },
  JSON.parse('{"__proto__": "x", "a": "b"}'),
  Object.create(null),
  new Date(0),
  new Map(),
  new Custom(),
  withSymbol,
  withLength,
  "concurrent",
  "follow_up",
  "steer",
  "file",
  "sqlite",
  "CONCURRENT",
  10n,
];

/** The parts of a result users and the settings store see. */
function summary(result: ReturnType<SettingsSchema<unknown>["safeParse"]>) {
  if (result.success) return { success: true, data: result.data };
  return { success: false, issues: result.error.issues.map(({ path, message, code, expected }: SchemaIssue) => ({ path, message, code, expected })) };
}

function assertSameAsZod(mine: SettingsSchema<unknown>, reference: SettingsSchema<unknown>, input: unknown, label: string): void {
  assert.deepStrictEqual(summary(mine.safeParse(input)), summary(reference.safeParse(input)), `${label}: ${show(input)}`);
}

function show(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number" || value === undefined) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Each field kind next to the zod schema it stands for. */
const kinds: [string, SettingsField<unknown>, z.ZodType][] = [
  ["string", field.string(), z.string()],
  ["string min", field.string().min(2), z.string().min(2)],
  ["string min, message", field.string().min(1, "not empty"), z.string().min(1, "not empty")],
  ["string nullable", field.string().nullable().default(null), z.string().nullable().default(null)],
  ["string default", field.string().default("all"), z.string().default("all")],
  ["number", field.number(), z.number()],
  ["number int", field.number().int(), z.number().int()],
  ["number int, message", field.number().int("whole, please"), z.number().int("whole, please")],
  ["number positive", field.number().positive(), z.number().positive()],
  ["number int positive, message", field.number().int().positive("expected a whole number greater than 0"), z.number().int().positive("expected a whole number greater than 0")],
  ["number min max", field.number().min(0).max(2), z.number().min(0).max(2)],
  ["number min before int", field.number().min(0).int(), z.number().min(0).int()],
  ["number min max, messages", field.number().min(1, "low").max(2, "high"), z.number().min(1, "low").max(2, "high")],
  ["number nullable default", field.number().int().nullable().default(null), z.number().int().nullable().default(null)],
  ["boolean", field.boolean(), z.boolean()],
  ["boolean default", field.boolean().default(false), z.boolean().default(false)],
  ["enum", field.enum(["concurrent", "follow_up", "steer"]), z.enum(["concurrent", "follow_up", "steer"])],
  ["enum of one", field.enum(["only"]), z.enum(["only"])],
  ["enum nullable", field.enum(["file", "sqlite"]).nullable(), z.enum(["file", "sqlite"]).nullable()],
  ["string array", field.stringArray(), z.array(z.string())],
  ["string array nullable", field.stringArray().nullable().default(null), z.array(z.string()).nullable().default(null)],
  ["string record", field.stringRecord(), z.record(z.string(), z.string())],
  ["json object", field.jsonObject(), z.record(z.string(), z.unknown())],
  ["json object nullable", field.jsonObject().nullable().default({}), zodJsonObject],
  ["string or record", field.stringOrStringRecord(), z.union([z.string(), z.record(z.string(), z.string())])],
  ["string or record nullable", field.stringOrStringRecord().nullable().default(null), zodStringOrMap],
];

describe("settings fields", () => {
  for (const [label, mine, reference] of kinds) {
    it(`${label}: accepts, refuses and words its issues as zod does`, () => {
      const schema = settingsSchema({ value: mine });
      const zodSchema = z.object({ value: reference });
      for (const sample of samples) assertSameAsZod(schema, zodSchema, { value: sample, other: 1 }, label);
    });
  }

  it("builds the builtin schemas so they parse every sample like the zod schemas they replace", () => {
    for (const [name, mine, reference] of [
      ["agent", agentSchema, zodAgent],
      ["channel", channelSchema, zodChannel],
      ["spill", spillSchema, zodSpill],
    ] as const) {
      assert.deepEqual(Object.keys(mine.shape), Object.keys(reference.shape), name);
      assertSameAsZod(mine, reference, {}, name);
      for (const key of Object.keys(mine.shape)) for (const sample of samples) assertSameAsZod(mine, reference, { [key]: sample }, `${name}.${key}`);
      // Several bad keys at once: every issue, in the shape's order.
      assertSameAsZod(mine, reference, Object.fromEntries(Object.keys(mine.shape).map((key) => [key, "bad"])), name);
      for (const notAnObject of [null, undefined, [], "x", 3]) assertSameAsZod(mine, reference, notAnObject, name);
    }
  });

  it("fills defaults, keeps zod's messages and custom messages", () => {
    assert.deepEqual(agentSchema.safeParse({}), {
      success: true,
      data: {
        model: "openrouter:openrouter/free",
        fallback_models: null,
        api_key: null,
        api_base: null,
        max_steps: null,
        max_tokens: 16384,
        model_timeout_seconds: null,
        client_args: {},
        completion_args: {},
        verbose: 0,
      },
    });
    const issues = (input: unknown) => {
      const result = agentSchema.safeParse(input);
      return result.success ? [] : result.error.issues.map((issue) => [issue.path.join("."), issue.message]);
    };
    assert.deepEqual(issues({ max_steps: "3" }), [["max_steps", "Invalid input: expected number, received string"]]);
    assert.deepEqual(issues({ max_steps: 0 }), [["max_steps", "expected a whole number greater than 0"]]);
    assert.deepEqual(issues({ max_steps: 1.5 }), [["max_steps", "Invalid input: expected int, received number"]]);
    assert.deepEqual(issues({ model: "" }), [["model", "expected a provider:model id such as openrouter:openrouter/free"]]);
    assert.deepEqual(issues({ model: undefined, max_tokens: null }), [["max_tokens", "Invalid input: expected number, received null"]]);
    assert.deepEqual(issues({ verbose: 3 }), [["verbose", "Too big: expected number to be <=2"]]);
    assert.deepEqual(issues({ fallback_models: ["a", 1] }), [["fallback_models.1", "Invalid input: expected string, received number"]]);
    assert.deepEqual(issues({ api_key: 5 }), [["api_key", "Invalid input"]]);
    assert.deepEqual(issues({ client_args: [] }), [["client_args", "Invalid input: expected record, received array"]]);
    const channel = channelSchema.safeParse({ admission: "later", debounce_seconds: -1 });
    assert.equal(channel.success, false);
    assert.deepEqual(
      channel.success ? [] : channel.error.issues.map((issue) => issue.message),
      ["Too small: expected number to be >=0", 'Invalid option: expected one of "concurrent"|"follow_up"|"steer"'],
    );
  });

  it("turns null into {} for a nullable JSON object, and refuses null elsewhere unless nullable", () => {
    const schema = settingsSchema({ args: field.jsonObject().nullable().default({}), strict: field.jsonObject().default({}), name: field.string().default("x") });
    assert.deepEqual(schema.safeParse({ args: null }), { success: true, data: { args: {}, strict: {}, name: "x" } });
    const refused = schema.safeParse({ strict: null, name: null });
    assert.deepEqual(
      refused.success ? [] : refused.error.issues.map((issue) => issue.message),
      ["Invalid input: expected record, received null", "Invalid input: expected string, received null"],
    );
    assert.deepEqual(settingsSchema({ key: field.string().nullable() }).safeParse({ key: null }), { success: true, data: { key: null } });
  });

  it("requires a field without a default", () => {
    const result = settingsSchema({ token: field.string(), level: field.number().nullable() }).safeParse({});
    assert.deepEqual(result, {
      success: false,
      error: {
        issues: [
          { code: "invalid_type", expected: "string", message: "Invalid input: expected string, received undefined", path: ["token"] },
          { code: "invalid_type", expected: "number", message: "Invalid input: expected number, received undefined", path: ["level"] },
        ],
      },
    });
  });

  it("drops unknown keys", () => {
    assert.deepEqual(spillSchema.safeParse({ threshold: 1, other: 2, spill: { x: 1 } }), { success: true, data: { threshold: 1 } });
  });

  it("gives every parse its own copy of a default and of the input's objects", () => {
    const schema = settingsSchema({ args: field.jsonObject().nullable().default({ nested: { a: 1 } }), list: field.stringArray().default(["a"]), map: field.stringRecord().default({}) });
    const first = schema.safeParse({});
    const second = schema.safeParse({});
    assert.ok(first.success && second.success);
    assert.notEqual(first.data.args, second.data.args);
    assert.notEqual(first.data.args.nested, second.data.args.nested);
    assert.notEqual(first.data.list, second.data.list);
    assert.notEqual(first.data.map, second.data.map);
    first.data.list.push("b");
    first.data.map.x = "y";
    const third = schema.safeParse({});
    assert.ok(third.success);
    assert.deepEqual(third.data, { args: { nested: { a: 1 } }, list: ["a"], map: {} });
    const agentA = agentSchema.safeParse({});
    const agentB = agentSchema.safeParse({});
    assert.ok(agentA.success && agentB.success);
    assert.notEqual(agentA.data.client_args, agentB.data.client_args);
    assert.notEqual(agentA.data.client_args, agentA.data.completion_args);
    const input = { args: { a: 1 }, list: ["x"], map: { k: "v" } };
    const parsed = schema.safeParse(input);
    assert.ok(parsed.success);
    assert.notEqual(parsed.data.args, input.args);
    assert.notEqual(parsed.data.list, input.list);
    assert.notEqual(parsed.data.map, input.map);
  });

  it("fields are immutable: a check or default makes a new field", () => {
    const base = field.number();
    const positive = base.positive();
    const defaulted = base.default(1);
    const schema = settingsSchema({ a: base, b: positive, c: defaulted });
    assert.deepEqual(schema.safeParse({ a: -1, b: 1 }), { success: true, data: { a: -1, b: 1, c: 1 } });
    assert.equal(schema.safeParse({ a: -1, b: -1, c: 1 }).success, false);
    assert.equal(schema.safeParse({ b: 1 }).success, false);
  });

  it("tells its kind, in zod's type names", () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(agentSchema.shape).map(([key, item]) => [key, item.kind])),
      {
        model: "string",
        fallback_models: "array",
        api_key: "union",
        api_base: "union",
        max_steps: "number",
        max_tokens: "number",
        model_timeout_seconds: "number",
        client_args: "record",
        completion_args: "record",
        verbose: "number",
      },
    );
    assert.equal(channelSchema.shape.stream_output.kind, "boolean");
    assert.equal(channelSchema.shape.admission.kind, "enum");
  });

  it("converts environment strings by kind exactly as for the zod schema, errors included", async () => {
    const mine = settingsSchema({
      n: field.number().int().default(1),
      f: field.number().default(0.5),
      b: field.boolean().default(false),
      s: field.string().default(""),
      e: field.enum(["a", "b"]).default("a"),
      list: field.stringArray().nullable().default(null),
      map: field.stringRecord().default({}),
      json: field.jsonObject().nullable().default({}),
      either: field.stringOrStringRecord().nullable().default(null),
    });
    const reference = z.object({
      n: z.number().int().default(1),
      f: z.number().default(0.5),
      b: z.boolean().default(false),
      s: z.string().default(""),
      e: z.enum(["a", "b"]).default("a"),
      list: z.array(z.string()).nullable().default(null),
      map: z.record(z.string(), z.string()).default({}),
      json: zodJsonObject,
      either: zodStringOrMap,
    });
    const envs: NodeJS.ProcessEnv[] = [
      { BUB_T_N: "42", BUB_T_F: " 1.25 ", BUB_T_B: "yes", BUB_T_S: "007", BUB_T_E: "b", BUB_T_LIST: '["x","y"]', BUB_T_MAP: '{"k":"v"}', BUB_T_JSON: '{"t":0.2}', BUB_T_EITHER: '{"openai":"k"}' },
      { BUB_T_B: "off", BUB_T_LIST: "null", BUB_T_JSON: "null", BUB_T_EITHER: "plain-key" },
      { BUB_T_N: "4.5" },
      { BUB_T_N: "many", BUB_T_B: "maybe" },
      { BUB_T_F: "" },
      { BUB_T_E: "c", BUB_T_LIST: "[1]", BUB_T_MAP: "not json" },
      { BUB_T_EITHER: "{broken" },
    ];
    const resolve = async (schema: SettingsSchema<unknown>, env: NodeJS.ProcessEnv) => {
      const settings = new Settings(emptyConfigFile("config.yml"), env);
      try {
        return { value: await settings.load(defineSettings({ id: "t", section: "t", schema })) };
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return { error: error.message };
      }
    };
    for (const env of envs) assert.deepEqual(await resolve(mine, env), await resolve(reference, env), JSON.stringify(env));
  });

  it("loads without zod, and tool.ts (loaded by every turn) turns off zod's JIT", () => {
    const hooks = `
      import { registerHooks } from "node:module";
      const zod = [];
      registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); if (result.url.includes("/zod/")) zod.push(result.url); return result; } });
    `;
    const schemas = new URL("../../src/builtin/schemas.ts", import.meta.url).href;
    const withoutZod = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `${hooks}
        const { agentSchema } = await import(${JSON.stringify(schemas)});
        const settings = await import(${JSON.stringify(new URL("../../src/builtin/settings.ts", import.meta.url).href)});
        if (!agentSchema.safeParse({}).success || !settings.agentSettings) throw new Error("did not parse");
        process.stdout.write(JSON.stringify(zod));`,
      ],
      { encoding: "utf8" },
    );
    assert.deepEqual(JSON.parse(withoutZod), []);
    const jitless = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `${hooks}
        const { z } = await import("zod");
        const before = z.config().jitless ?? false;
        await import(${JSON.stringify(new URL("../../src/tools/tool.ts", import.meta.url).href)});
        process.stdout.write(JSON.stringify({ before, after: z.config().jitless, loaded: zod.length > 0 }));`,
      ],
      { encoding: "utf8", cwd: new URL("../..", import.meta.url) },
    );
    assert.deepEqual(JSON.parse(jitless), { before: false, after: true, loaded: true });
  });
});
