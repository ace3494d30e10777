/** `bub tape show` and `bub tape export`: one session's tape as a transcript, JSON lines or Markdown. */
import { BubError } from "../../kernel/errors.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import type { TapeEntry } from "../../kernel/tape-contract.ts";
import { utcNow } from "../../tape/date.ts";
import { findSessionTape, type SessionTape } from "../../tape/session-tapes.ts";
import { buildTranscript, type Transcript, type TranscriptItem, type TranscriptTurn } from "../../tape/transcript.ts";
import { renderTranscriptMarkdown, renderTranscriptText } from "../../tape/transcript-render.ts";
import { withTapeStore } from "./tape-store.ts";
import { runningPackageVersion } from "../../plugins/api-check.ts";

type Out = { write(text: string): unknown };

/** The tape `session` names (in the framework's workspace first) and its entries. */
async function readSession(framework: BubFramework, session: string): Promise<{ found: SessionTape; entries: TapeEntry[] }> {
  return withTapeStore(framework, async (store) => {
    const found = await findSessionTape(store, session, framework.workspace);
    return { found, entries: await store.fetchAll({ tape: found.tape }) };
  });
}

function itemJson(item: TranscriptItem): Record<string, unknown> {
  if (item.type !== "tool_call" && item.type !== "tool_result") return { ...item };
  const { callId, ...rest } = item;
  return { ...rest, call_id: callId };
}

function turnJson(turn: TranscriptTurn): Record<string, unknown> {
  return {
    number: turn.number,
    turn_id: turn.turnId,
    start: turn.start,
    end: turn.end,
    duration_ms: turn.durationMs,
    model: turn.model,
    model_calls: turn.modelCalls,
    tool_calls: turn.toolCalls,
    usage: turn.usage,
    continued: turn.continued,
    items: turn.items.map(itemJson),
  };
}

/** The `--json` shape of a transcript (snake_case keys, as in the tape and `bub run --json`). */
export function transcriptJson(transcript: Transcript): Record<string, unknown> {
  return {
    session_id: transcript.sessionId,
    workspace: transcript.workspace,
    tape: transcript.tape,
    entries: transcript.entries,
    turn_count: transcript.turnCount,
    turns: transcript.turns.map(turnJson),
  };
}

/** Writes the transcript of `session` to `out`: text, or JSON with `json`. */
export async function runTapeShow(framework: BubFramework, session: string, options: { sinceAnchor?: string | true; json?: boolean; full?: boolean }, out: Out): Promise<void> {
  const { found, entries } = await readSession(framework, session);
  const transcript = buildTranscript(entries, { ...found, sinceAnchor: options.sinceAnchor });
  out.write(options.json ? `${JSON.stringify(transcriptJson(transcript), null, 2)}\n` : renderTranscriptText(transcript, { maxLines: options.full ? Infinity : 20 }));
}

/** The formats of `bub tape export`. */
export const EXPORT_FORMATS = ["jsonl", "markdown", "atif", "cloudevents"] as const;

/** The ATIF trajectory of a session's tape (see src/tape/atif.ts). */
async function trajectoryOf(found: SessionTape, entries: readonly TapeEntry[]) {
  const { tapeToAtif } = await import("../../tape/atif.ts");
  const version = (await runningPackageVersion()) ?? "unknown";
  return tapeToAtif(entries, { tape: found.tape, sessionId: found.sessionId, workspace: found.workspace, agentVersion: version });
}

/**
 * Writes `session`'s tape to `out`: every entry as a JSON line (the file store's own line
 * format), the Markdown transcript, an ATIF trajectory (one JSON document) or CloudEvents
 * whose data are the trajectory's steps (one JSON line each).
 * @throws BubError `invalid_input` for another format.
 */
export async function runTapeExport(framework: BubFramework, session: string, options: { format: string }, out: Out): Promise<void> {
  const format = options.format.trim().toLowerCase();
  if (format !== "md" && !EXPORT_FORMATS.some((known) => known === format)) {
    throw new BubError("invalid_input", `Unknown export format ${JSON.stringify(options.format)} — use --format jsonl, markdown, atif or cloudevents`);
  }
  const { found, entries } = await readSession(framework, session);
  if (format === "jsonl") {
    out.write(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
    return;
  }
  if (format === "atif") {
    out.write(`${JSON.stringify(await trajectoryOf(found, entries), null, 2)}\n`);
    return;
  }
  if (format === "cloudevents") {
    const { trajectoryEvents } = await import("../../tape/cloudevents.ts");
    out.write(trajectoryEvents(await trajectoryOf(found, entries), found.tape).map((event) => `${JSON.stringify(event)}\n`).join(""));
    return;
  }
  out.write(renderTranscriptMarkdown(buildTranscript(entries, found), { exported: utcNow() }));
}
