import { field, settingsSchema } from "../kernel/settings-fields.ts";

// Built without zod: creating zod schemas and parsing with them for the first time costs
// ~5 ms of every turn. (zod's `jitless` setting is made in src/tools/tool.ts.)

const stringOrMap = () => field.stringOrStringRecord().nullable().default(null);
const jsonObject = () => field.jsonObject().nullable().default({});

/** Model and agent settings (YAML root; env `BUB_*`). */
export const agentSchema = settingsSchema({
  model: field.string().min(1, "expected a provider:model id such as openrouter:openrouter/free").default("openrouter:openrouter/free"),
  fallback_models: field.stringArray().nullable().default(null),
  api_key: stringOrMap(),
  api_base: stringOrMap(),
  max_steps: field.number().int().positive("expected a whole number greater than 0").nullable().default(null),
  max_tokens: field.number().int().positive().default(16384),
  model_timeout_seconds: field.number().positive().nullable().default(null),
  client_args: jsonObject(),
  completion_args: jsonObject(),
  verbose: field.number().int().min(0).max(2).default(0),
});

/** Channel manager and storage settings (YAML root; env `BUB_*`). */
export const channelSchema = settingsSchema({
  enabled_channels: field.string().default("all"),
  debounce_seconds: field.number().min(0).default(1.0),
  max_wait_seconds: field.number().min(0).default(10.0),
  active_time_window: field.number().min(0).default(60.0),
  stream_output: field.boolean().default(false),
  admission: field.enum(["concurrent", "follow_up", "steer"]).default("concurrent"),
  tape_store: field.enum(["file", "sqlite"]).default("file"),
  tape_dsn: field.string().nullable().default(null),
});

/** Tool-output spilling (YAML `spill:`; env `BUB_SPILL_*`). */
export const spillSchema = settingsSchema({
  threshold: field.number().int().min(0).default(4096),
});
