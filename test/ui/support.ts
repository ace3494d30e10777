/** Tapes for the web view's tests and benchmark: turns shaped like the ones the agent writes. */
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";

/** What one written turn holds. */
export interface TurnSpec {
  user: string;
  answer: string;
  /** A tool call (name, JSON arguments) and its result, between the prompt and the answer. */
  tool?: { name: string; arguments: string; result: string; id?: string };
  usage?: { prompt_tokens: number; completion_tokens: number };
  model?: string;
  /** The date every entry of the turn carries (default: now). */
  date?: Date;
}

/** The entries of one turn as the agent loop writes them (loop.start … run … loop.step). */
export function turnEntries(spec: TurnSpec) {
  const model = spec.model ?? "fake:test-model";
  const usage = spec.usage ?? { prompt_tokens: 100, completion_tokens: 10 };
  const run = (prompt: number, completion: number) => entries.event("run", { status: "ok", usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }, model });
  const out = [entries.event("loop.start", { model, prompt: spec.user }), entries.event("loop.step.start", { step: 1, prompt: spec.user }), entries.message({ role: "user", content: spec.user })];
  if (spec.tool) {
    const id = spec.tool.id ?? "call_1";
    out.push(
      entries.toolCall([{ id, type: "function", function: { name: spec.tool.name, arguments: spec.tool.arguments } }]),
      entries.toolResult([spec.tool.result]),
      run(usage.prompt_tokens, 1),
    );
  }
  out.push(entries.message({ role: "assistant", content: spec.answer }), run(usage.prompt_tokens, usage.completion_tokens), entries.event("loop.step", { step: 1, elapsed_ms: 12, status: "ok" }));
  const date = spec.date?.toISOString().replace("Z", "000+00:00");
  return date ? out.map((entry) => ({ ...entry, date })) : out;
}

/** Appends a bootstrap anchor when the tape is new, then one turn. */
export async function writeTurn(store: TapeStore, tape: string, spec: TurnSpec): Promise<void> {
  const existing = await store.fetchAll({ tape, limit: 1 });
  const batch = existing.length === 0 ? [entries.anchor("session/start", { owner: "human" }), ...turnEntries(spec)] : turnEntries(spec);
  if (store.appendBatch) await store.appendBatch(tape, batch);
  else for (const entry of batch) await store.append(tape, entry);
}
