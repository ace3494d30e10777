/**
 * The turn journal (issue 36): a turn writes its session tape through an in-memory fork that
 * is merged when the turn ends, so a process killed mid-turn left nothing of the turn behind
 * and its retry ran every tool call again. After each step that called tools the fork's new
 * entries are copied, in one durable batch, to a hidden sidecar tape of the session in the
 * same store (`<tape>__sidecar__turn`); the merge clears it. A turn retried after a restart
 * copies the journaled steps back into its fork and continues with the next step, so tools
 * that completed are not run again (the model is given their recorded results).
 */
import { createLogger } from "../kernel/log.ts";
import { isRecord } from "../kernel/guards.ts";
import type { Prompt } from "../kernel/envelope.ts";
import type { NewTapeEntry, TapeEntry, TapeStore } from "../kernel/tape-contract.ts";
import { appendMany } from "../tape/append-many.ts";
import type { TapeFork } from "../tape/fork.ts";
import { sidecarTapeName } from "../tape/sidecar.ts";

const log = createLogger("bub:agent");

/** The sidecar name of the journal tape. */
export const TURN_JOURNAL_SIDECAR = "turn";
/** The event a resumed turn writes before its first new step. */
export const TURN_RESUMED_EVENT = "turn.resumed";

/** Meta keys of a journal entry: the tape it belongs to, and the turn that started the journal. */
const TAPE_KEY = "journal_tape";
const GENERATION_KEY = "journal_turn";

/** Where a resumed turn goes on. */
export interface ResumePoint {
  /** The last step that completed (its tool results are on the tape). */
  readonly step: number;
  /** The prompt of that step (the continue prompt is built from it). */
  readonly prompt: Prompt;
  /** How many tool calls completed and are not run again. */
  readonly toolCalls: number;
  /** The turn that was cut off. */
  readonly fromTurnId: string;
}

const stringMeta = (entry: TapeEntry, key: string): string | undefined => (typeof entry.meta[key] === "string" ? String(entry.meta[key]) : undefined);

/**
 * One turn's journal over the parent store of its fork.
 *
 * ```ts
 * const journal = new TurnJournal(fork, tapes.store, turnId);
 * const resume = retried ? await journal.restore() : null;
 * // after each step that ran tools:
 * await journal.checkpoint();
 * // after the merge:
 * await journal.clear();
 * ```
 */
export class TurnJournal {
  readonly #fork: TapeFork;
  readonly #store: TapeStore;
  readonly #main: string;
  readonly #name: string;
  #generation: string;
  /** Entries of each tape already journaled (or there before the loop started). */
  readonly #done = new Map<string, number>();
  #used = false;

  constructor(fork: TapeFork, store: TapeStore, turnId: string) {
    this.#fork = fork;
    this.#store = store;
    this.#main = fork.tape.name;
    this.#name = sidecarTapeName(this.#main, TURN_JOURNAL_SIDECAR);
    this.#generation = turnId;
  }

  /** Marks what the fork holds now (the bootstrap anchor) as not part of the journal. */
  begin(): void {
    for (const [tape, held] of this.#fork.pending()) this.#done.set(tape, held.length);
  }

  /** Copies the fork's entries written since the last checkpoint to the journal, in one batch. */
  async checkpoint(): Promise<void> {
    const batch: NewTapeEntry[] = [];
    for (const [tape, held] of this.#fork.pending()) {
      for (const entry of held.slice(this.#done.get(tape) ?? 0)) {
        batch.push({ kind: entry.kind, payload: entry.payload, meta: { ...entry.meta, [TAPE_KEY]: tape, [GENERATION_KEY]: this.#generation }, date: entry.date });
      }
      this.#done.set(tape, held.length);
    }
    if (batch.length === 0) return;
    this.#used = true;
    await appendMany(this.#store, this.#name, batch);
  }

  /**
   * For a turn retried after a restart: copies the steps its cut-off run journaled into the
   * fork (sidecar tapes first) and answers where to go on; null when there is nothing to resume
   * (no journal, or the cut-off run had merged already, which is then cleared).
   */
  async restore(): Promise<ResumePoint | null> {
    const journaled = await this.#store.fetchAll({ tape: this.#name });
    const last = journaled.at(-1);
    const generation = last ? stringMeta(last, GENERATION_KEY) : undefined;
    if (!last || generation === undefined) return null;
    this.#used = true;
    const own = journaled.filter((entry) => stringMeta(entry, GENERATION_KEY) === generation);
    const fromTurnId = stringMeta(own[0] ?? last, "turn_id") ?? generation;
    // Killed after its merge but before the journal was cleared: the tape has it all already.
    if ((await this.#store.fetchAll({ tape: this.#main, text: fromTurnId, limit: 1 })).length > 0) {
      log.info(`turn.journal.stale tape=${this.#main} turn_id=${fromTurnId}: merged before the restart; not resumed`);
      return null;
    }
    const point = resumePoint(own, fromTurnId);
    if (!point) return null;
    const byTape = new Map<string, NewTapeEntry[]>();
    for (const entry of own) {
      const tape = stringMeta(entry, TAPE_KEY) ?? this.#main;
      const { [TAPE_KEY]: _tape, [GENERATION_KEY]: _generation, ...meta } = entry.meta;
      byTape.set(tape, [...(byTape.get(tape) ?? []), { kind: entry.kind, payload: entry.payload, meta, date: entry.date }]);
    }
    const tapes = [...byTape.keys()].sort((a, b) => Number(a === this.#main) - Number(b === this.#main));
    for (const tape of tapes) await appendMany(this.#fork.store, tape, byTape.get(tape) ?? []);
    // Later checkpoints extend the same generation: a second cut-off resumes all of it.
    this.#generation = generation;
    this.begin();
    return point;
  }

  /** Empties the journal once the turn's entries are merged (nothing to do when it never wrote). */
  async clear(): Promise<void> {
    if (!this.#used) return;
    this.#used = false;
    await this.#store.reset(this.#name);
  }
}

/** The last completed step of journaled entries (a `loop.step` event with status `continue`). */
function resumePoint(own: readonly TapeEntry[], fromTurnId: string): ResumePoint | null {
  let step = 0;
  let prompt: Prompt | null = null;
  let toolCalls = 0;
  for (const entry of own) {
    const data = entry.kind === "event" && isRecord(entry.payload.data) ? entry.payload.data : null;
    if (entry.kind === "tool_call" && Array.isArray(entry.payload.calls)) toolCalls += entry.payload.calls.length;
    if (!data) continue;
    if (entry.payload.name === "loop.step.start" && isPrompt(data.prompt)) prompt = data.prompt;
    if (entry.payload.name === "loop.step" && data.status === "continue" && typeof data.step === "number") step = data.step;
  }
  return step > 0 && prompt !== null ? { step, prompt, toolCalls, fromTurnId } : null;
}

function isPrompt(value: unknown): value is Prompt {
  return typeof value === "string" || (Array.isArray(value) && value.every((part) => isRecord(part) && typeof part.type === "string"));
}
