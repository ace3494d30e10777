import { z } from "zod";

// zod compiles a parser for each object schema on its first parse (`new Function`); a turn
// parses each schema only a few times, so compiling costs more than it saves (~10 ms of a
// one-shot `bub run`). Settings load first on every path, so this applies before any parse.
z.config({ jitless: true });

const stringOrMap = z.union([z.string(), z.record(z.string(), z.string())]).nullable().default(null);
const jsonObject = z.record(z.string(), z.unknown()).nullable().transform((value) => value ?? {}).default({});

/** Model and agent settings (YAML root; env `BUB_*`). */
export const agentSchema = z.object({
  model: z.string().min(1, "expected a provider:model id such as openrouter:openrouter/free").default("openrouter:openrouter/free"),
  fallback_models: z.array(z.string()).nullable().default(null),
  api_key: stringOrMap,
  api_base: stringOrMap,
  max_steps: z.number().int().positive("expected a whole number greater than 0").nullable().default(null),
  max_tokens: z.number().int().positive().default(16384),
  model_timeout_seconds: z.number().positive().nullable().default(null),
  client_args: jsonObject,
  completion_args: jsonObject,
  verbose: z.number().int().min(0).max(2).default(0),
});

/** Channel manager and storage settings (YAML root; env `BUB_*`). */
export const channelSchema = z.object({
  enabled_channels: z.string().default("all"),
  debounce_seconds: z.number().min(0).default(1.0),
  max_wait_seconds: z.number().min(0).default(10.0),
  active_time_window: z.number().min(0).default(60.0),
  stream_output: z.boolean().default(false),
  admission: z.enum(["concurrent", "follow_up", "steer"]).default("concurrent"),
  tape_store: z.enum(["file", "sqlite"]).default("file"),
  tape_dsn: z.string().nullable().default(null),
});

/** Tool-output spilling (YAML `spill:`; env `BUB_SPILL_*`). */
export const spillSchema = z.object({
  threshold: z.number().int().min(0).default(4096),
});
