import type { BubError } from "../kernel/errors.ts";
import type { Usage } from "../kernel/stream.ts";
import type { ChatMessage, JsonObject } from "../kernel/tape-contract.ts";
import type { ChatToolCall } from "./model-call.ts";

/**
 * Everything one model step leaves on the tape. The tape layer writes it in the order of
 * {@link stepRecordEntries}; every entry carries `meta.run_id`.
 */
export interface StepRecord {
  readonly runId: string;
  /** Written as a `system` entry when non-empty. */
  readonly systemPrompt: string | null;
  /** Reading the context failed with this error. */
  readonly contextError: BubError | null;
  /** Steering messages and the prompt, as user messages. */
  readonly newMessages: readonly ChatMessage[];
  readonly toolCalls: readonly ChatToolCall[] | null;
  readonly toolResults: readonly unknown[] | null;
  /** The step's failure (the model call or the context), if any. */
  readonly error: BubError | null;
  /** The assistant's reply; null when the step made tool calls, or failed before any text. */
  readonly responseText: string | null;
  /** True when `responseText` is the part streamed before the call failed (meta `incomplete: true`). */
  readonly incomplete?: boolean;
  readonly usage: Usage | null;
  /** Provider and `provider:model` that answered (or were asked, on failure). */
  readonly provider: string | null;
  readonly model: string | null;
}

/** A tape entry without id and date (the store assigns both). */
export interface StepEntry {
  readonly kind: string;
  readonly payload: JsonObject;
  readonly meta: JsonObject;
}

/**
 * The entries of a step record, in the reference runtime's order: `system`, context
 * `error`, each new `message`, `tool_call`, `tool_result`, step `error` (unless it is the
 * context error), the assistant `message`, then the `run` event
 * `{ status, usage?, provider?, model? }`. The `tool_call` and `tool_result` entries also
 * carry `tool_call_ids`, the calls' ids in order.
 */
export function stepRecordEntries(record: StepRecord): StepEntry[] {
  const meta = (): JsonObject => ({ run_id: record.runId });
  const entries: StepEntry[] = [];
  if (record.systemPrompt) entries.push({ kind: "system", payload: { content: record.systemPrompt }, meta: meta() });
  if (record.contextError) entries.push({ kind: "error", payload: { ...record.contextError.toData() }, meta: meta() });
  for (const message of record.newMessages) entries.push({ kind: "message", payload: { ...message }, meta: meta() });
  const calls = (record.toolCalls ?? []).map((call) => call.id);
  const callMeta = (): JsonObject => (calls.some((id) => id !== "") ? { ...meta(), tool_call_ids: calls } : meta());
  if (record.toolCalls && record.toolCalls.length > 0) entries.push({ kind: "tool_call", payload: { calls: [...record.toolCalls] }, meta: callMeta() });
  if (record.toolResults) entries.push({ kind: "tool_result", payload: { results: [...record.toolResults] }, meta: callMeta() });
  if (record.error && record.error !== record.contextError) entries.push({ kind: "error", payload: { ...record.error.toData() }, meta: meta() });
  if (record.responseText !== null) {
    entries.push({ kind: "message", payload: { role: "assistant", content: record.responseText }, meta: record.incomplete ? { ...meta(), incomplete: true } : meta() });
  }
  const data: JsonObject = { status: record.error ? "error" : "ok" };
  if (record.usage) data.usage = record.usage;
  if (record.provider) data.provider = record.provider;
  if (record.model) data.model = record.model;
  entries.push({ kind: "event", payload: { name: "run", data }, meta: meta() });
  return entries;
}
