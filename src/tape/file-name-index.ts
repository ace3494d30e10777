/**
 * The file store's name index: `<tapes directory>/.index.jsonl`, one line per session tape,
 * `{"tape","session_id","workspace","date"}`. Tape names are hashes of the workspace and
 * the session id, so this is how `bub tape` turns a session id into a file and back. Lines
 * are appended (never rewritten) by whichever process first uses a tape; a repeated line is
 * harmless, the first one for a tape wins. The name starts with a dot, so `tapes/*.jsonl`
 * globs (scripts, tests) do not take it for a tape, and has no `__`, so neither runtime
 * lists it as one.
 */
import { appendFile } from "node:fs/promises";
import { makeDirectoryAsync, PRIVATE_FILE_MODE } from "../config/home-dir.ts";
import { join } from "node:path";
import { createLogger } from "../kernel/log.ts";
import type { TapeNameRecord } from "../kernel/tape-contract.ts";
import { utcNow } from "./date.ts";
import { errorCode } from "../config/thrown.ts";
import { readBoundedTextFile } from "../config/bounded-file.ts";
import { isRecord } from "../kernel/guards.ts";
import type { RecentSet } from "../kernel/recent-set.ts";
import { recordedTapeNames, REMEMBERED_TAPE_NAMES } from "./recorded-names.ts";

const log = createLogger("bub:tape");

/** The name of the index file inside a tapes directory. */
export const NAME_INDEX_FILE = ".index.jsonl";
/** The most bytes of the name index read at once; a larger one (or a FIFO) is refused. */
const NAME_INDEX_MAX_BYTES = 64 * 1024 * 1024;

/** The records of an index file's text (malformed lines are skipped); the first line for a tape wins. */
export function parseNameIndex(text: string): TapeNameRecord[] {
  const records = new Map<string, TapeNameRecord>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(value)) continue;
    const { tape, session_id: sessionId, workspace } = value;
    if (typeof tape !== "string" || typeof sessionId !== "string" || typeof workspace !== "string" || records.has(tape)) continue;
    records.set(tape, { tape, sessionId, workspace });
  }
  return [...records.values()];
}

/** One line of the index file, newline included. */
export function nameIndexLine(record: TapeNameRecord): string {
  return `${JSON.stringify({ tape: record.tape, session_id: record.sessionId, workspace: record.workspace, date: utcNow() })}\n`;
}

/** A tapes directory's name index. */
export interface FileNameIndex {
  /**
   * Appends `record` unless the index (as this process knows it) has the tape already.
   * Never rejects: a failure is logged (the tape is then found by its hash until it is used again).
   */
  record(record: TapeNameRecord): Promise<void>;
  /** Every record in the file. */
  read(): Promise<TapeNameRecord[]>;
  /** Waits for the appends in flight. */
  flush(): Promise<void>;
}

/**
 * The name index of the tapes in `directory` (nothing is read or written before the first
 * call). It remembers the last `remembered` tapes it found in or added to the file
 * (default {@link REMEMBERED_TAPE_NAMES}), so its memory does not grow with the tapes used.
 */
export function createFileNameIndex(directory: string, remembered = REMEMBERED_TAPE_NAMES): FileNameIndex {
  const path = join(directory, NAME_INDEX_FILE);
  let known: Promise<RecentSet<string>> | null = null;
  /** The directory was found or made (checked again only after a failure). */
  let directoryReady = false;
  // Appends one after another, so a record is never written twice by this process.
  let chain: Promise<void> = Promise.resolve();

  async function readRecords(): Promise<TapeNameRecord[]> {
    try {
      return parseNameIndex(await readBoundedTextFile(path, { maxBytes: NAME_INDEX_MAX_BYTES, what: "the tape name index", tooLargeFix: "move it away (tapes are then listed by their file names)" }));
    } catch (error) {
      if (errorCode(error) === "ENOENT") return [];
      throw error;
    }
  }

  return {
    record(record) {
      chain = chain
        .then(async () => {
          // The file's last lines are the tapes recorded most recently: they are the ones kept.
          known ??= readRecords().then((records) => {
            const names = recordedTapeNames(remembered);
            for (const each of records) names.add(each.tape);
            return names;
          });
          const names = await known;
          if (names.has(record.tape)) return;
          if (!directoryReady) await makeDirectoryAsync(directory);
          directoryReady = true;
          await appendFile(path, nameIndexLine(record), { encoding: "utf8", mode: PRIVATE_FILE_MODE });
          names.add(record.tape);
        })
        .catch((error: unknown) => {
          known = null;
          directoryReady = false;
          log.warn(`tape.name_index.failed path=${path} tape=${record.tape}`, error);
        });
      return chain;
    },
    read: readRecords,
    flush: () => chain,
  };
}
