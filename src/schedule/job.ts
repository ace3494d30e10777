/**
 * A scheduled turn as it is stored: when it runs (a cron expression or one instant), the
 * prompt, and the session it belongs to with the channel and chat its answer goes to.
 */
import { randomBytes } from "node:crypto";
import { isRecord } from "../kernel/guards.ts";

/** One scheduled turn. Exactly one of `cron` and `at` is set. */
export interface ScheduleJob {
  /** `sch-` and 8 hex digits. */
  readonly id: string;
  /** The session the turn runs in (e.g. `telegram:7`). */
  readonly session_id: string;
  /** The channel the turn's message comes from and its answer goes to (e.g. `telegram`). */
  readonly channel: string;
  /** The chat in that channel (e.g. a Telegram chat id). */
  readonly chat_id: string;
  /** What the turn is asked. */
  readonly prompt: string;
  /** A cron expression (5 fields, or 6 with seconds first), for a repeating turn. */
  readonly cron: string | null;
  /** An ISO time (UTC), for a turn that runs once. */
  readonly at: string | null;
  /** IANA time zone the cron expression is read in; null: the gateway host's. */
  readonly timezone: string | null;
  /** When the job was added (ISO, UTC). */
  readonly created_at: string;
}

/** What the gateway remembers of a job's runs. */
export interface ScheduleRunState {
  /** The scheduled time of the last run (ISO, UTC). */
  readonly last_run_at: string;
  /** When that run was handed to the channel manager (ISO, UTC). */
  readonly fired_at: string;
}

/** A fresh job id: `sch-` and 8 random hex digits. */
export function newJobId(): string {
  return `sch-${randomBytes(4).toString("hex")}`;
}

/** True for an id {@link newJobId} could have made (ids name files, so nothing else is accepted). */
export function isJobId(value: string): boolean {
  return /^sch-[0-9a-f]{8}$/.test(value);
}

const text = (value: unknown): value is string => typeof value === "string" && value !== "";

/** A field that must be a non-empty string. */
function requiredText(record: Record<string, unknown>, field: string): string {
  const value = record[field];
  if (!text(value)) throw new Error(`field '${field}' is missing or not a string`);
  return value;
}

/** A field that may be missing or null, else a non-empty string. */
function optionalText(record: Record<string, unknown>, field: string): string | null {
  const value = record[field] ?? null;
  if (value !== null && !text(value)) throw new Error(`field '${field}' is not a string or null`);
  return value;
}

/**
 * The job a parsed JSON file holds.
 * @throws Error naming the first field that is missing or malformed.
 */
export function parseJob(value: unknown): ScheduleJob {
  if (!isRecord(value)) throw new Error("not a JSON object");
  const id = requiredText(value, "id");
  const session_id = requiredText(value, "session_id");
  const channel = requiredText(value, "channel");
  const chat_id = requiredText(value, "chat_id");
  const prompt = requiredText(value, "prompt");
  const created_at = requiredText(value, "created_at");
  const cron = optionalText(value, "cron");
  const at = optionalText(value, "at");
  const timezone = optionalText(value, "timezone");
  if ((cron === null) === (at === null)) throw new Error("exactly one of 'cron' and 'at' must be set");
  if (at !== null && Number.isNaN(Date.parse(at))) throw new Error(`field 'at' is not a time: ${at}`);
  if (!isJobId(id)) throw new Error(`field 'id' is not a schedule id: ${id}`);
  return { id, session_id, channel, chat_id, prompt, cron, at, timezone, created_at };
}

/** The run state a parsed JSON file holds, or null when it is not one. */
export function parseRunState(value: unknown): ScheduleRunState | null {
  if (!isRecord(value) || !text(value.last_run_at) || Number.isNaN(Date.parse(value.last_run_at))) return null;
  return { last_run_at: value.last_run_at, fired_at: text(value.fired_at) ? value.fired_at : value.last_run_at };
}

/** `cron "0 9 * * *" (Europe/Berlin)` or `once at 2026-05-01T09:00:00.000Z`. */
export function describeWhen(job: ScheduleJob): string {
  if (job.cron !== null) return `cron ${JSON.stringify(job.cron)}${job.timezone ? ` (${job.timezone})` : ""}`;
  return `once at ${job.at}`;
}
