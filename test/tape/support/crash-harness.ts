// Crash trials: a child appends in a loop and is killed with SIGKILL at a random moment; then
// every append it acknowledged must be on the tape, ids must be strictly increasing, and
// nothing unparsable may be served. Between trials a torn line is sometimes left at the end
// of the file (as a power cut mid-write would), which the next appends must step over.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setLogSink } from "../../../src/kernel/log.ts";
import type { TapeEntry, TapeStore } from "../../../src/kernel/tape-contract.ts";
import { entries } from "../../../src/tape/entry.ts";
import { decodeEntry } from "../../../src/tape/entry.ts";
import { createFileTapeStore } from "../../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../../src/tape/sqlite-store.ts";

const CHILD = fileURLToPath(new URL("./append-child.ts", import.meta.url));
const TAPE = "c0ffee00c0ffee00__dead0000beef0000";

/** Options of {@link runCrashTrials}. */
export interface CrashTrialOptions {
  store: "file" | "sqlite";
  trials: number;
  directory: string;
  seed?: number;
}

/** What a run of crash trials did. */
export interface CrashReport {
  readonly seed: number;
  readonly trials: number;
  readonly acknowledged: number;
  readonly entries: number;
  readonly tornLines: number;
}

/** A small seeded PRNG (mulberry32) so a failing run can be replayed with its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Ack {
  readonly id: number;
  readonly seq: number;
  readonly label: string;
}

/** Runs one child until it has acknowledged `target` entries plus a few event-loop turns, then kills it. */
function killedChild(kind: string, location: string, label: string, target: number, extraTurns: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, kind, location, TAPE, label], { stdio: ["ignore", "pipe", "pipe"] });
    const acks: Ack[] = [];
    let buffered = "";
    let stderr = "";
    let killing = false;
    const killSoon = (turns: number): void => {
      if (turns <= 0) child.kill("SIGKILL");
      else setImmediate(() => killSoon(turns - 1));
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const [id, seq] = line.split(" ").map(Number);
        acks.push({ id: id!, seq: seq!, label });
      }
      if (!killing && acks.length >= target) {
        killing = true;
        killSoon(extraTurns);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`child ${label} ended with code ${code} instead of being killed: ${stderr}`));
      else resolve(acks);
    });
  });
}

/** Entries as an independent reader sees them in the raw JSONL file. */
function rawEntryIds(path: string): number[] {
  if (!existsSync(path)) return [];
  const segments = readFileSync(path, "utf8").split("\n");
  const ids: number[] = [];
  for (const segment of segments) {
    let value: unknown;
    try {
      value = JSON.parse(segment);
    } catch {
      continue;
    }
    const entry = decodeEntry(value);
    if (typeof entry !== "string") ids.push(entry.id);
  }
  return ids;
}

function verify(found: TapeEntry[], acked: Map<number, Ack>, context: string): void {
  for (let index = 1; index < found.length; index++) {
    assert.ok(found[index]!.id > found[index - 1]!.id, `${context}: ids must be strictly increasing (${found[index - 1]!.id} then ${found[index]!.id})`);
  }
  const byId = new Map(found.map((entry) => [entry.id, entry]));
  for (const ack of acked.values()) {
    const entry = byId.get(ack.id);
    assert.ok(entry, `${context}: acknowledged entry ${ack.id} (${ack.label}#${ack.seq}) is missing`);
    const data = entry.payload.data as { label?: unknown; seq?: unknown };
    assert.deepEqual([entry.kind, data.label, data.seq], ["event", ack.label, ack.seq], `${context}: entry ${ack.id} holds something else`);
  }
}

/**
 * Runs crash trials against one store kind in `directory`.
 * @throws AssertionError on the first violated guarantee (the message names the seed).
 */
export async function runCrashTrials(options: CrashTrialOptions): Promise<CrashReport> {
  // Each verification opens a fresh store, which warns again about the torn lines it skips.
  const restoreLogs = setLogSink((level, namespace, message) => {
    if (!(level === "warn" && message.startsWith("tape.line_skipped"))) process.stderr.write(`${level} ${namespace} ${message}\n`);
  });
  try {
    return await crashTrials(options);
  } finally {
    restoreLogs();
  }
}

async function crashTrials(options: CrashTrialOptions): Promise<CrashReport> {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const next = random(seed);
  const location = options.store === "sqlite" ? join(options.directory, "tapes.sqlite3") : options.directory;
  const open = (): TapeStore => (options.store === "sqlite" ? createSqliteTapeStore({ path: location }) : createFileTapeStore({ directory: location }));
  const file = join(options.directory, `${TAPE}.jsonl`);
  const acked = new Map<number, Ack>();
  let tornLines = 0;
  let found: TapeEntry[] = [];
  for (let trial = 0; trial < options.trials; trial++) {
    const context = `${options.store} trial ${trial} (seed ${seed})`;
    if (options.store === "file" && existsSync(file) && next() < 0.3 && readFileSync(file).at(-1) === 0x0a) {
      const line = JSON.stringify({ id: 999_999, kind: "event", payload: { name: "torn", data: { text: "x".repeat(50) } }, meta: {}, date: "2026-01-01T00:00:00.000000+00:00" });
      appendFileSync(file, line.slice(0, 1 + Math.floor(next() * (line.length - 2))));
      tornLines++;
    }
    const acks = await killedChild(options.store, location, `t${trial}`, 1 + Math.floor(next() * 40), Math.floor(next() * 30));
    for (const ack of acks) {
      assert.ok(!acked.has(ack.id), `${context}: id ${ack.id} was acknowledged twice`);
      acked.set(ack.id, ack);
    }
    const store = open();
    found = await store.fetchAll({ tape: TAPE });
    await store.close?.();
    verify(found, acked, context);
    if (options.store === "file") assert.deepEqual(found.map((entry) => entry.id), rawEntryIds(file), `${context}: served entries differ from the parsable lines`);
  }
  const store = open();
  const sealed = await store.append(TAPE, entries.event("after the crashes"));
  assert.equal(sealed.id, (found.at(-1)?.id ?? 0) + 1, "the next id follows the last surviving entry");
  if (options.store === "file") {
    const skipped = await (store as ReturnType<typeof createFileTapeStore>).skippedLines(TAPE);
    assert.equal(skipped.length, tornLines, `every torn line is skipped and reported (seed ${seed})`);
  }
  await store.close?.();
  return { seed, trials: options.trials, acknowledged: acked.size, entries: found.length, tornLines };
}
