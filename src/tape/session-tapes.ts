/**
 * Session tapes by the names people use. A tape's name is `md5(workspace)[:16]__md5(session
 * id)[:16]`; the store's name index (see `TapeStore.recordTapeName`) maps it back to the
 * session id and workspace. Tapes written before the index existed are still found by the
 * session half of their name, which is the same in every workspace.
 */
import { BubError } from "../kernel/errors.ts";
import type { TapeNameRecord, TapeStore } from "../kernel/tape-contract.ts";
import { isSidecarTapeName } from "./sidecar.ts";
import { resolveWorkspace, sessionHash, sessionTapeName } from "./tapes.ts";

/** A session tape with what the name index knows of it. */
export interface SessionTape {
  readonly tape: string;
  /** Null when the name index does not know the tape. */
  readonly sessionId: string | null;
  /** Null when the name index does not know the tape. */
  readonly workspace: string | null;
}

const TAPE_NAME = /^[0-9a-f]{16}__[0-9a-f]{16}$/;

/** The name index of `store` by tape name (empty when the store keeps none). */
export async function nameIndexOf(store: TapeStore): Promise<Map<string, TapeNameRecord>> {
  const records = (await store.tapeNames?.()) ?? [];
  return new Map(records.map((record) => [record.tape, record]));
}

/** Every session tape of `store` (sorted by name), with its session id and workspace when indexed. */
export async function listSessionTapes(store: TapeStore): Promise<SessionTape[]> {
  const [tapes, names] = await Promise.all([store.listTapes(), nameIndexOf(store)]);
  return tapes.map((tape) => {
    const record = names.get(tape);
    return { tape, sessionId: record?.sessionId ?? null, workspace: record?.workspace ?? null };
  });
}

function describe(tape: SessionTape): string {
  return `${tape.tape} (${tape.workspace ?? "workspace unknown"})`;
}

/**
 * The tape `target` names: a session id (the one in `workspace` first, when there are
 * several), or a tape name as `bub tape list` prints it.
 *
 * ```ts
 * const { tape } = await findSessionTape(store, "telegram:42", process.cwd());
 * ```
 * @throws BubError `not_found` when no tape matches; `invalid_input` when the session has
 *   tapes in several workspaces and none in `workspace` (the message lists them).
 */
export async function findSessionTape(store: TapeStore, target: string, workspace: string): Promise<SessionTape> {
  const tapes = await listSessionTapes(store);
  if (TAPE_NAME.test(target) || (target.includes("__") && !isSidecarTapeName(target))) {
    const byName = tapes.find((tape) => tape.tape === target);
    if (byName) return byName;
  }
  const hash = sessionHash(target);
  const candidates = tapes.filter((tape) => (tape.sessionId === null ? tape.tape.endsWith(`__${hash}`) : tape.sessionId === target));
  const here = sessionTapeName(target, workspace);
  const local = candidates.find((tape) => tape.tape === here);
  if (local) return { ...local, sessionId: target, workspace: local.workspace ?? resolveWorkspace(workspace) };
  if (candidates.length === 1) return { ...candidates[0], sessionId: target };
  if (candidates.length > 1) {
    throw new BubError(
      "invalid_input",
      `Session ${JSON.stringify(target)} has tapes in ${candidates.length} workspaces, none of them ${resolveWorkspace(workspace)}: ${candidates.map(describe).join(", ")} — pass -w <workspace> or the tape name`,
    );
  }
  throw new BubError("not_found", `No tape for session ${JSON.stringify(target)} — run \`bub tape list\` to see the sessions and their tape names`);
}
