/** `bub tape list`: one row per session tape, newest activity first. */
import { homedir } from "node:os";
import type { BubFramework } from "../../kernel/framework.ts";
import type { TapeStore } from "../../kernel/tape-contract.ts";
import { nameIndexOf } from "../../tape/session-tapes.ts";
import { tapeStatsOf } from "../../tape/tape-stats.ts";
import { groupDigits, shortDate } from "../../tape/transcript-render.ts";
import { withTapeStore } from "./tape-store.ts";
import { scaledBytes } from "../../config/bounded-file.ts";

/** One row of `bub tape list` (also its `--json` shape). */
export interface TapeListRow {
  /** Null for a tape the name index does not know (written before it existed). */
  readonly session_id: string | null;
  readonly workspace: string | null;
  readonly tape: string;
  readonly entries: number;
  readonly turns: number;
  /** Date of the newest entry. */
  readonly last_activity: string | null;
  /** Bytes in the store; null when the store cannot tell. */
  readonly bytes: number | null;
}

/** The rows for every session tape of `store`, newest activity first. */
export async function tapeListRows(store: TapeStore): Promise<TapeListRow[]> {
  const [stats, names] = await Promise.all([tapeStatsOf(store), nameIndexOf(store)]);
  const rows = stats.map((each): TapeListRow => {
    const name = names.get(each.tape);
    return {
      session_id: name?.sessionId ?? null,
      workspace: name?.workspace ?? null,
      tape: each.tape,
      entries: each.entries,
      turns: each.turns,
      last_activity: each.lastDate,
      bytes: each.bytes,
    };
  });
  // Plain comparisons: the dates are ISO strings, and localeCompare costs ~25 ms on 10,000 rows.
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return rows.sort((a, b) => order(b.last_activity ?? "", a.last_activity ?? "") || order(a.tape, b.tape));
}

/** `512 B`, `9.1 KB`, `1.2 MB`. */
export function humanBytes(bytes: number | null): string {
  if (bytes === null) return "-";
  if (bytes < 1024) return `${bytes} B`;
  const { value, unit } = scaledBytes(bytes, ["KB", "MB", "GB", "TB"]);
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${unit}`;
}

/** A path with the home directory written `~`. */
function tilde(path: string, home: string): string {
  return home !== "" && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
}

/** The rows as an aligned table with a header; a tape without a session id shows its tape name. */
export function formatTapeList(rows: readonly TapeListRow[], options: { home?: string } = {}): string {
  if (rows.length === 0) return "No session tapes yet: a session's tape is written by its first turn (bub run, bub chat, the gateway).\n";
  const home = options.home ?? homedir();
  const header = ["SESSION", "WORKSPACE", "ENTRIES", "TURNS", "LAST ACTIVITY", "SIZE"];
  const cells = rows.map((row) => [
    row.session_id ?? row.tape,
    row.workspace ? tilde(row.workspace, home) : "?",
    groupDigits(row.entries),
    groupDigits(row.turns),
    row.last_activity ? shortDate(row.last_activity) : "-",
    humanBytes(row.bytes),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column].length)));
  const numeric = new Set([2, 3, 5]);
  const line = (cell: readonly string[]) =>
    cell.map((text, column) => (numeric.has(column) ? text.padStart(widths[column]) : column === cell.length - 1 ? text : text.padEnd(widths[column]))).join("  ").trimEnd();
  return `${[header, ...cells].map(line).join("\n")}\n`;
}

/** Writes the list (a table, or JSON with `json`) to `out`. */
export async function runTapeList(framework: BubFramework, options: { json?: boolean }, out: { write(text: string): unknown }): Promise<void> {
  const rows = await withTapeStore(framework, tapeListRows);
  out.write(options.json ? `${JSON.stringify(rows, null, 2)}\n` : formatTapeList(rows));
}
