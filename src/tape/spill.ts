/**
 * The spill sidecar: oversized tool results are stored in chunks on the sidecar tape
 * `<tape>__sidecar__spill`, and the model sees a bounded preview with a handle it can page
 * through with the `spill.read` tool (reference spec §6.7).
 */
import { randomUUID } from "node:crypto";
import { BubError, describeError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import type { NewTapeEntry, TapeEntry, TapeSidecar } from "../kernel/tape-contract.ts";
import { entries } from "./entry.ts";
import { pythonRepr, withThousands } from "./python-format.ts";
import type { Tape } from "./tape.ts";
import { codePointLength, headCodePoints, tailCodePoints, utf8Chunks } from "./text-units.ts";
import { isRecord } from "../kernel/guards.ts";

const log = createLogger("bub:tape");
const MARKER = Symbol.for("bub.tape.SpillSidecar");

/** The sidecar's name; its tape is `<tape>__sidecar__spill`. */
export const SPILL_SIDECAR_NAME = "spill";
/** Runtime name of the tool that reads spilled results. */
export const SPILL_READ_TOOL_NAME = "spill.read";
/** The same tool's model-facing name. */
export const SPILL_READ_MODEL_NAME = "spill_read";
/** Most UTF-8 bytes in one chunk. */
export const SPILL_CHUNK_BYTES = 16_384;
/** Most chunks one read returns. */
export const MAX_READ_CHUNKS = 4;
/** Results up to this many characters are previewed whole. */
export const PREVIEW_CHARS = 600;
/** Default threshold in estimated tokens (4 characters each). */
export const DEFAULT_SPILL_THRESHOLD = 4096;

/** What the manifest of one spilled result says. */
export interface SpillManifest {
  readonly handle: string;
  readonly chunks: number;
  readonly bytes: number;
  readonly chars: number;
  readonly lines: number;
}

/** One page of a spilled result. */
export interface SpillPage {
  readonly manifest: SpillManifest;
  readonly content: string;
  /** First chunk index shown. */
  readonly start: number;
  /** One past the last chunk index shown. */
  readonly stop: number;
  readonly nextCursor: number;
  readonly complete: boolean;
}

/** The outcome of reading a page: no such handle, a damaged spill, or the page. */
export type SpillReadResult =
  | { readonly status: "missing" }
  | { readonly status: "incomplete"; readonly reason: string }
  | { readonly status: "ok"; readonly page: SpillPage };

/** Where to read from: `cursor` chunks from the start (or from the end), `count` chunks (at most 4). */
export interface SpillReadOptions {
  cursor?: number;
  count?: number;
  fromEnd?: boolean;
}

/** The spill sidecar mounted on session tapes. */
export interface SpillSidecar extends TapeSidecar {
  readonly name: typeof SPILL_SIDECAR_NAME;
  /** Estimated tokens (4 characters each) from which results spill; 0 disables new spills. */
  readonly threshold: number;
  /**
   * Returns `result` unchanged when it is small (or the tool is `spill.read`); otherwise stores
   * it on the sidecar tape and returns the reference's notice with a preview. Never throws for
   * storage failures: the result is then truncated to the preview and the failure recorded.
   */
  spillToolResult(tape: Tape, result: string, options: { tool: string; runId: string }): Promise<string>;
  /** The manifest of a spilled result, or null when the handle is unknown. */
  manifest(tape: Tape, handle: string): Promise<SpillManifest | null>;
  /** One page of a spilled result. */
  read(tape: Tape, handle: string, options?: SpillReadOptions): Promise<SpillReadResult>;
}

function chunkAnchor(handle: string, index: number): string {
  return `spill/${handle}/chunk/${index}`;
}

function manifestAnchor(handle: string): string {
  return `spill/${handle}/manifest`;
}

/** The preview shown in place of a spilled result: whole up to 600 characters, else head and tail. */
export function spillPreview(text: string): string {
  const length = codePointLength(text);
  if (length <= PREVIEW_CHARS) return text;
  const head = PREVIEW_CHARS / 2;
  return `${headCodePoints(text, head)}\n...[${withThousands(length - PREVIEW_CHARS)} chars omitted]...\n${tailCodePoints(text, PREVIEW_CHARS - head)}`;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function manifestFrom(entry: TapeEntry | undefined, handle: string): SpillManifest | null {
  if (!entry || entry.kind !== "event" || entry.payload.name !== "spill.manifest") return null;
  const data = entry.payload.data;
  if (!isRecord(data) || data.handle !== handle) return null;
  const [chunks, bytes, chars, lines] = [count(data.chunks), count(data.bytes), count(data.chars), count(data.lines)];
  if (chunks === undefined || bytes === undefined || chars === undefined || lines === undefined) return null;
  return { handle, chunks, bytes, chars, lines };
}

function isNotFound(error: unknown): boolean {
  return BubError.isInstance(error) && error.kind === "not_found";
}

/** True for a sidecar made by {@link createSpillSidecar}. */
export function isSpillSidecar(value: unknown): value is SpillSidecar {
  return typeof value === "object" && value !== null && MARKER in value && value[MARKER] === true;
}

/**
 * Creates the spill sidecar (`BUB_SPILL_THRESHOLD` → `threshold`, default 4096).
 * @throws BubError `config` when the threshold is not a whole number >= 0.
 */
export function createSpillSidecar(options: { threshold?: number } = {}): SpillSidecar {
  const threshold = options.threshold ?? DEFAULT_SPILL_THRESHOLD;
  if (!Number.isInteger(threshold) || threshold < 0) {
    throw new BubError("config", `The spill threshold must be a whole number >= 0 (got ${String(threshold)}): fix BUB_SPILL_THRESHOLD.`);
  }

  async function recordWrite(tape: Tape, data: Record<string, unknown>, runId: string): Promise<void> {
    try {
      await tape.appendEvent("spill.write", data, { run_id: runId, context: false });
    } catch (error) {
      log.warn(`spill write event failed run_id=${runId} error=${describeError(error)}`);
    }
  }

  const sidecar: SpillSidecar & { [MARKER]: true } = {
    [MARKER]: true,
    name: SPILL_SIDECAR_NAME,
    threshold,
    async spillToolResult(tape, result, { tool, runId }) {
      if (threshold <= 0 || tool === SPILL_READ_TOOL_NAME || tool === SPILL_READ_MODEL_NAME) return result;
      const chars = codePointLength(result);
      if (chars < threshold * 4) return result;
      const handle = randomUUID().replaceAll("-", "");
      const encoded = Buffer.from(result, "utf8");
      const chunks = utf8Chunks(encoded, SPILL_CHUNK_BYTES);
      const batch: NewTapeEntry[] = chunks.flatMap((chunk, index) => [
        entries.anchor(chunkAnchor(handle, index)),
        entries.toolResult([chunk], { spill_handle: handle, spill_chunk: index }),
      ]);
      batch.push(entries.anchor(manifestAnchor(handle)));
      let lines = 1;
      for (let index = result.indexOf("\n"); index >= 0; index = result.indexOf("\n", index + 1)) lines++;
      batch.push(entries.event("spill.manifest", { handle, chunks: chunks.length, bytes: encoded.length, chars, lines, tool }, { spill_handle: handle, run_id: runId }));
      try {
        await appendToSidecar(tape, batch);
      } catch (error) {
        log.warn(`tool result spill failed tool=${tool} error=${describeError(error)}`);
        await recordWrite(tape, { status: "error", handle, bytes: encoded.length, tool, error: describeError(error) }, runId);
        return `[tool output truncated: ${withThousands(encoded.length)} bytes; spill storage failed]\n${spillPreview(result)}`;
      }
      await recordWrite(tape, { status: "ok", handle, bytes: encoded.length, chunks: chunks.length, tool }, runId);
      return (
        `[tool output spilled: ${withThousands(encoded.length)} bytes in ${withThousands(chunks.length)} chunks; handle: ${handle}]\n` +
        `[read with: ${SPILL_READ_MODEL_NAME}(handle=${pythonRepr(handle)}, cursor=0, count=1, from_end=False)]\n` +
        spillPreview(result)
      );
    },
    async manifest(tape, handle) {
      const sidecarTape = tape.sidecarTapeName(SPILL_SIDECAR_NAME);
      try {
        const found = await tape.store.fetchAll({ tape: sidecarTape, afterAnchor: manifestAnchor(handle), kinds: ["event"], limit: 1 });
        return manifestFrom(found[0], handle);
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async read(tape, handle, options = {}) {
      const manifest = await sidecar.manifest(tape, handle);
      if (!manifest) return { status: "missing" };
      const cursor = Math.max(0, Math.trunc(options.cursor ?? 0));
      const wanted = Math.min(Math.max(1, Math.trunc(options.count ?? 1)), MAX_READ_CHUNKS);
      let start: number;
      let stop: number;
      let nextCursor: number;
      let complete: boolean;
      if (options.fromEnd) {
        stop = Math.max(0, manifest.chunks - cursor);
        start = Math.max(0, stop - wanted);
        nextCursor = cursor + (stop - start);
        complete = start === 0;
      } else {
        start = Math.min(cursor, manifest.chunks);
        stop = Math.min(start + wanted, manifest.chunks);
        nextCursor = stop;
        complete = stop === manifest.chunks;
      }
      if (start === stop) return { status: "ok", page: { manifest, content: "", start, stop, nextCursor, complete: true } };
      const sidecarTape = tape.sidecarTapeName(SPILL_SIDECAR_NAME);
      let found: TapeEntry[];
      try {
        found = await tape.store.fetchAll({ tape: sidecarTape, afterAnchor: chunkAnchor(handle, start), kinds: ["tool_result"], limit: stop - start });
      } catch (error) {
        if (isNotFound(error)) return { status: "incomplete", reason: `missing chunk ${start} for handle ${pythonRepr(handle)}` };
        throw error;
      }
      if (found.length !== stop - start) return { status: "incomplete", reason: `missing chunks for handle ${pythonRepr(handle)}` };
      const parts: string[] = [];
      for (const [offset, entry] of found.entries()) {
        const index = start + offset;
        const results = entry.payload.results;
        const chunk: unknown = Array.isArray(results) && results.length === 1 ? results[0] : undefined;
        const valid = entry.meta.spill_handle === handle && entry.meta.spill_chunk === index && typeof chunk === "string";
        if (!valid) return { status: "incomplete", reason: `invalid chunk ${index} for handle ${pythonRepr(handle)}` };
        parts.push(chunk);
      }
      return { status: "ok", page: { manifest, content: parts.join(""), start, stop, nextCursor, complete } };
    },
  };
  return sidecar;

  async function appendToSidecar(tape: Tape, batch: NewTapeEntry[]): Promise<void> {
    const sidecarTape = tape.sidecarTapeName(SPILL_SIDECAR_NAME);
    if (tape.store.appendBatch) await tape.store.appendBatch(sidecarTape, batch);
    else for (const entry of batch) await tape.store.append(sidecarTape, entry);
  }
}

/**
 * What the `spill.read` tool returns for one call, with the reference's exact texts: argument
 * errors, `spill sidecar unavailable in this context.`, unknown and damaged handles, or a page:
 *
 * ```text
 * [spilled tool result: 40,012 bytes, 3 chunks]
 * chunks: 0-0
 * next_cursor: 1
 * complete: false
 * content:
 * ...
 * ```
 */
export async function spillRead(tape: Tape, args: { handle: string } & SpillReadOptions): Promise<string> {
  const cursor = args.cursor ?? 0;
  const wanted = args.count ?? 1;
  if (cursor < 0) return "`cursor` must be >= 0.";
  if (wanted < 1) return "`count` must be >= 1.";
  const spill = tape.getSidecar(SPILL_SIDECAR_NAME);
  if (!isSpillSidecar(spill)) return "spill sidecar unavailable in this context.";
  const outcome = await spill.read(tape, args.handle, { cursor, count: Math.min(wanted, MAX_READ_CHUNKS), fromEnd: args.fromEnd ?? false });
  if (outcome.status === "missing") return `[no spilled tool result for handle ${pythonRepr(args.handle)}]`;
  if (outcome.status === "incomplete") return `[incomplete spilled tool result: ${outcome.reason}]`;
  const { page } = outcome;
  const shown = page.stop > page.start ? `${page.start}-${page.stop - 1}` : "none";
  return (
    `[spilled tool result: ${withThousands(page.manifest.bytes)} bytes, ${withThousands(page.manifest.chunks)} chunks]\n` +
    `chunks: ${shown}\n` +
    `next_cursor: ${page.nextCursor}\n` +
    `complete: ${String(page.complete)}\n` +
    `content:\n${page.content}`
  );
}
