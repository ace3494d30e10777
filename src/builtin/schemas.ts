import { z } from "zod";
import { durationSeconds } from "../config/duration.ts";
import { DEFAULT_MAX_STEPS, DEFAULT_MODEL_TIMEOUT_SECONDS } from "../llm/settings.ts";
import { DEFAULT_SHELL_OUTPUT_MAX_BYTES } from "../tools/builtin/shell-output.ts";

// One zod object per settings group. Each key `k` is read from the variable `BUB_K` (or the
// section's prefix, `BUB_SPILL_K`), then from `config.yml`, then from the default here.
// src/builtin/settings.ts imports this module only when the settings are first resolved.

/** One string for every provider, or a provider id → string map. */
const stringOrMap = () => z.union([z.string(), z.record(z.string(), z.string())]).nullable().default(null);
/** A mapping passed through as it is; `null` reads as `{}`. */
const jsonObject = () =>
  z
    .record(z.string(), z.unknown())
    .nullable()
    .transform((value) => value ?? {})
    .default({});

/** Model and agent settings (YAML root; env `BUB_*`). */
export const agentSchema = z.object({
  model: z.string().min(1, "expected a provider:model id such as openrouter:openrouter/free").default("openrouter:openrouter/free"),
  fallback_models: z.array(z.string()).nullable().default(null),
  api_key: stringOrMap(),
  api_base: stringOrMap(),
  max_steps: z.number().int().positive().nullable().default(DEFAULT_MAX_STEPS),
  max_tokens: z.number().int().positive().default(16384),
  /** Seconds one model call attempt may take, stream included; `0` or `null`: no limit. */
  model_timeout_seconds: durationSeconds({ allowZero: true }).nullable().default(DEFAULT_MODEL_TIMEOUT_SECONDS),
  model_idle_timeout_seconds: durationSeconds({ allowZero: true }).nullable().default(120),
  client_args: jsonObject(),
  completion_args: jsonObject(),
  verbose: z.number().int().min(0).max(2).default(0),
  /** A SKILL.md larger than this many bytes is skipped with a warning (never sent to the model or the tape). */
  skill_max_bytes: z.number().int().positive().default(256 * 1024),
  /** A workspace AGENTS.md larger than this many bytes is left out of the system prompt with a warning. */
  agents_max_bytes: z.number().int().positive().default(256 * 1024),
  /** Let channel turns (not the local CLI) run `subagent` on another chat's `<channel>:<chat id>` session. */
  subagent_cross_session: z.boolean().default(false),
  /** Hosts and addresses `web.fetch` may reach although they are not public (docs/security.md). */
  web_fetch_allow_hosts: z.array(z.string()).default([]),
  /** The most bytes of a body `web.fetch` reads; its `max_bytes` argument defaults to 10 MB. */
  web_fetch_max_bytes: z.number().int().positive().default(10 * 1024 * 1024),
  /** The most bytes of one command's output `bash` keeps in memory: the first half and the last half, with a notice of what was cut between. */
  bash_output_max_bytes: z.number().int().positive().default(DEFAULT_SHELL_OUTPUT_MAX_BYTES),
  /** Variables `bash` keeps in its environment although they hold a secret (docs/security.md, *Secrets*). */
  tool_env_passthrough: z.array(z.string()).default([]),
  /** Run each `bash` command in its own PID namespace where the machine allows it (docs/security.md, *Secrets*). */
  tool_isolation: z.boolean().default(true),
});

/** Channel manager and storage settings (YAML root; env `BUB_*`). */
export const channelSchema = z.object({
  enabled_channels: z.string().default("all"),
  debounce_seconds: durationSeconds({ allowZero: true }).default(1.0),
  max_wait_seconds: durationSeconds({ allowZero: true }).default(10.0),
  active_time_window: durationSeconds({ allowZero: true }).default(60.0),
  stream_output: z.boolean().default(false),
  /** Seconds `bub gateway` lets running turns finish after SIGINT/SIGTERM before it cancels them. */
  shutdown_grace_seconds: durationSeconds({ allowZero: true }).default(10.0),
  /** Turns running at once across all sessions; more wait in arrival order (0: no bound). */
  max_concurrent_turns: z.number().int().min(0).default(64),
  admission: z.enum(["concurrent", "follow_up", "steer", "collect", "interrupt"]).default("concurrent"),
  tape_store: z.enum(["file", "sqlite", "postgres"]).default("file"),
  tape_dsn: z.string().nullable().default(null),
  /** For `tape_store: postgres`: `postgres://user:password@host:port/database` (a secret: redacted like a key). */
  database_url: z.string().nullable().default(null),
});

/** Tool-output spilling (YAML `spill:`; env `BUB_SPILL_*`). */
export const spillSchema = z.object({
  threshold: z.number().int().min(0).default(4096),
});
