// Shared helpers for the tape benchmarks: a realistic turn of 8 entries, timing and tables.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NewTapeEntry } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";

/** One agent step as the tape records it: 8 entries of typical sizes. */
export function turnEntries(turn: number): NewTapeEntry[] {
  const meta = { run_id: `run-${turn}` };
  return [
    entries.event("loop.step.start", { step: 1, prompt: `question number ${turn}` }, meta),
    entries.system("You are Bub, a helpful agent. Use tools and skills; answer through the channel skill. ".repeat(4), meta),
    entries.message({ role: "user", content: `please read file ${turn}.txt and summarise it` }, meta),
    entries.toolCall([{ id: `call-${turn}`, type: "function", function: { name: "fs_read", arguments: `{"path":"${turn}.txt"}` } }], meta),
    entries.toolResult([`line one of file ${turn}\n`.repeat(12)], meta),
    entries.message({ role: "assistant", content: `The file ${turn}.txt has twelve identical lines.` }, meta),
    entries.event("run", { status: "ok", usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } }, meta),
    entries.event("loop.step", { step: 1, status: "ok", elapsed_ms: 812 }, meta),
  ];
}

/** A fresh temporary directory and a function that removes it. */
export function scratchDirectory(label: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `bub-bench-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Milliseconds taken by `work`. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** Prints rows as an aligned text table. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
  console.log(line(header));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const row of rows) console.log(line(row));
}
