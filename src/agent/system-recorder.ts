/**
 * Recording model steps with their system prompt written only when it changed: the tape
 * keeps the last system prompt it holds, and a step whose prompt is the same one carries
 * just its hash on the `run` event (the reference's behaviour).
 */
import type { StepRecord } from "../llm/step-record.ts";
import type { ChatRecord, Tape } from "../tape/tape.ts";
import { systemHash } from "./prompt-text.ts";

/** Tapes whose last system prompt hash is remembered; past this, the memory starts again. */
const MAX_REMEMBERED = 4096;

/** The hash of the last system prompt per tape, read from the tape the first time. */
export class SystemPromptRecorder {
  readonly #hashes = new Map<string, string>();

  /** A recorder for one tape's steps. */
  recorder(tape: Tape): (record: StepRecord & Pick<ChatRecord, "cost">) => Promise<void> {
    return async (record) => {
      const system = record.systemPrompt ?? null;
      if (!system) {
        await tape.recordChat(record);
        return;
      }
      const hash = systemHash(system);
      const known = this.#hashes.get(tape.name) ?? (await lastSystemHash(tape));
      const batch = await tape.recordChat(known === hash ? { ...record, systemPrompt: null, systemHash: hash } : { ...record, systemHash: hash });
      if (batch.length === 0) return;
      if (!this.#hashes.has(tape.name) && this.#hashes.size >= MAX_REMEMBERED) this.#hashes.clear();
      this.#hashes.set(tape.name, hash);
    };
  }
}

async function lastSystemHash(tape: Tape): Promise<string | null> {
  // A query without text is oldest first: the last system entry is the newest.
  const content = (await tape.search(tape.query().kinds("system"))).at(-1)?.payload.content;
  return typeof content === "string" ? systemHash(content) : null;
}
