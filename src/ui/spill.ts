/**
 * Spilled tool output for the session page: a result too long for the tape is stored in
 * chunks on the session's spill sidecar tape; the page loads it a few chunks at a time, read
 * the way the `spill.read` tool reads it.
 */
import type { TapeStore } from "../kernel/tape-contract.ts";
import { createSpillSidecar, MAX_READ_CHUNKS } from "../tape/spill.ts";
import { createTape } from "../tape/tape.ts";

/** One page of spilled output, or why there is none. */
export type SpillPageResult = { content: string; nextCursor: number; complete: boolean; chunks: number } | { error: string };

/** Up to {@link MAX_READ_CHUNKS} chunks of the output spilled under `handle` from tape `tape`, from chunk `cursor`. */
export async function readSpill(store: TapeStore, tape: string, handle: string, cursor: number): Promise<SpillPageResult> {
  if (!/^[0-9a-f]{8,64}$/.test(handle)) return { error: "That is not a spill handle." };
  const sidecar = createSpillSidecar();
  const session = createTape({ name: tape, store, archivePath: "", sidecars: [sidecar] });
  const read = await sidecar.read(session, handle, { cursor, count: MAX_READ_CHUNKS });
  if (read.status === "missing") return { error: `No output was spilled under handle ${handle} on this tape.` };
  if (read.status === "incomplete") return { error: `The spilled output is damaged: ${read.reason}.` };
  const { page } = read;
  return { content: page.content, nextCursor: page.nextCursor, complete: page.complete, chunks: page.manifest.chunks };
}
