import type { BubError } from "../kernel/errors.ts";
import type { Usage } from "../kernel/stream.ts";
import type { ChatMessage } from "../kernel/tape-contract.ts";
import type { ChatToolCall } from "./model-call.ts";

/**
 * Everything one model step leaves on the tape. The tape writes it as entries in the
 * reference's order (`chatRecordEntries` in src/tape/tape.ts); every entry carries
 * `meta.run_id`.
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
  /** What the model said beside its tool calls ("Let me look."), kept on the `tool_call` entry as `content`. */
  readonly callText?: string | null;
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
  /** Wall time of the model call in ms (the stream, retries included); on the `run` event as `elapsed_ms`. */
  readonly elapsedMs?: number | null;
  /** Wall time of each tool call in ms, in call order (null for a call whose arguments did not decode); `tool_elapsed_ms`. */
  readonly toolElapsedMs?: readonly (number | null)[] | null;
}
