import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { createLogger } from "../kernel/log.ts";
import type { TapeContext, TapeEnd, TapeSidecar, TapeStore } from "../kernel/tape-contract.ts";
import { createDefaultTapeContext } from "./context.ts";
import { forkTape, type TapeFork } from "./fork.ts";
import { createTape, type Tape } from "./tape.ts";
import { createTapeSnapshot, TapeTails, type TapeSnapshot } from "./tape-snapshot.ts";

function md5Prefix(text: string): string {
  return createHash("md5").update(text).digest("hex").slice(0, 16);
}

/** An absolute path with symlinks resolved as far as the path exists (Python's `Path.resolve()`). */
export function resolveWorkspace(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync.native(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(resolveWorkspace(parent), basename(absolute));
  }
}

/**
 * The tape name of a session: `md5(resolved workspace)[:16] + "__" + md5(sessionId)[:16]`,
 * the reference runtime's naming, so both runtimes find the same tape file.
 */
export function sessionTapeName(sessionId: string, workspace: string): string {
  return tapeNameOf(sessionId, resolveWorkspace(workspace));
}

/** {@link sessionTapeName} for the sessions of one workspace, resolved once (no disk access per name). */
export function sessionTapeNamer(workspace: string): (sessionId: string) => string {
  const resolved = resolveWorkspace(workspace);
  return (sessionId) => tapeNameOf(sessionId, resolved);
}

function tapeNameOf(sessionId: string, resolvedWorkspace: string): string {
  return `${md5Prefix(resolvedWorkspace)}__${md5Prefix(sessionId)}`;
}

/** The `md5(sessionId)[:16]` half of a session's tape name (the part that is the same in every workspace). */
export function sessionHash(sessionId: string): string {
  return md5Prefix(sessionId);
}

/** Sessions that are never persisted (a `temp/` subagent's). */
function isTemporarySession(sessionId: string): boolean {
  return sessionId.startsWith("temp/");
}

const log = createLogger("bub:tape");

const MAX_REMEMBERED_NAMES = 4096;

/** Options of {@link createTapes}. */
export interface TapesOptions {
  store: TapeStore;
  /** The context new tapes read through (default: {@link createDefaultTapeContext}). */
  context?: TapeContext;
  /** Sidecars mounted on every tape, highest precedence first; a repeated name keeps the first. */
  sidecars?: readonly TapeSidecar[];
  /** Where archives go (normally `<BUB_HOME>/tapes`). */
  archivePath: string;
}

/** The runtime's tapes: session tapes over one store, with shared context and sidecars. */
export interface Tapes {
  readonly store: TapeStore;
  readonly context: TapeContext;
  readonly sidecars: readonly TapeSidecar[];
  readonly archivePath: string;
  /** The tape of a session in a workspace, read through `context` (default: the shared one). */
  sessionTape(sessionId: string, workspace: string, context?: TapeContext): Tape;
  /** A tape by its name. */
  tape(name: string, context?: TapeContext): Tape;
  /** A private fork of `tape` for one turn; see {@link TapeFork}. */
  fork(tape: Tape, options?: { mergeBack?: boolean }): TapeFork;
  /**
   * One turn's snapshot of `tape` (see `tape-snapshot.ts`): `tape` over a store that reads
   * it once and answers the turn's reads from that (or not at all, when `end`, where the tape
   * ended when the turn's message was admitted, is where the last turn here left it);
   * `refresh` adds what others appended since.
   */
  snapshot(tape: Tape, end?: TapeEnd): { readonly tape: Tape; readonly refresh: TapeSnapshot["refresh"] };
}

/**
 * Creates the tape service the agent uses.
 *
 * ```ts
 * const tapes = createTapes({ store, sidecars: [createSpillSidecar()], archivePath: join(home, "tapes") });
 * await using fork = tapes.fork(tapes.sessionTape(sessionId, workspace));
 * ```
 */
export function createTapes(options: TapesOptions): Tapes {
  const context = options.context ?? createDefaultTapeContext();
  const seen = new Set<string>();
  const sidecars = Object.freeze((options.sidecars ?? []).filter((sidecar) => !seen.has(sidecar.name) && seen.add(sidecar.name)));
  const { store, archivePath } = options;
  const tape = (name: string, tapeContext?: TapeContext): Tape => createTape({ name, store, context: tapeContext ?? context, sidecars, archivePath });
  // Tape names by workspace and session: resolving the workspace touches the disk, so it is
  // done once per workspace, and the name once per pair (every turn asks several times).
  // Bounded: cleared when it fills up.
  // The first time, the store's name index learns the pair (in the background).
  const names = new Map<string, string>();
  // What the last turn of each tape held, so the next turn reads only what came after it.
  const tails = new TapeTails();
  const workspaces = new Map<string, string>();
  const nameOf = (sessionId: string, workspace: string): string => {
    const key = `${workspace}\u0000${sessionId}`;
    let name = names.get(key);
    if (name === undefined) {
      if (names.size >= MAX_REMEMBERED_NAMES) names.clear();
      if (workspaces.size >= MAX_REMEMBERED_NAMES) workspaces.clear();
      let resolved = workspaces.get(workspace);
      if (resolved === undefined) workspaces.set(workspace, (resolved = resolveWorkspace(workspace)));
      names.set(key, (name = tapeNameOf(sessionId, resolved)));
      if (store.recordTapeName && !isTemporarySession(sessionId)) {
        const tape = name;
        store.recordTapeName({ tape, sessionId, workspace: resolved }).catch((error: unknown) => log.warn(`tape.name_index.failed tape=${tape}`, error));
      }
    }
    return name;
  };
  return {
    store,
    context,
    sidecars,
    archivePath,
    sessionTape: (sessionId, workspace, tapeContext) => tape(nameOf(sessionId, workspace), tapeContext),
    tape,
    fork: (target, forkOptions) => forkTape(target, forkOptions),
    snapshot(target, end) {
      const snapshot = createTapeSnapshot(target.store, target.name, tails, end);
      return { tape: target.withStore(snapshot.store), refresh: snapshot.refresh };
    },
  };
}
