// Finding a session's tape by the names people use: session ids, tape names, old tapes by hash.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { entries } from "../../src/tape/entry.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { findSessionTape, listSessionTapes } from "../../src/tape/session-tapes.ts";
import { resolveWorkspace, sessionTapeName } from "../../src/tape/tapes.ts";
import { bubError, tempDir } from "./support/helpers.ts";

async function storeWith(tapes: { session: string; workspace: string; indexed: boolean }[]) {
  const store = createMemoryTapeStore();
  for (const { session, workspace, indexed } of tapes) {
    const tape = sessionTapeName(session, workspace);
    await store.append(tape, entries.event("x"));
    if (indexed) await store.recordTapeName({ tape, sessionId: session, workspace: resolveWorkspace(workspace) });
  }
  return store;
}

describe("session tapes", () => {
  const here = tempDir("here");
  const there = tempDir("there");

  it("lists every session tape with what the name index knows", async () => {
    const store = await storeWith([
      { session: "cli:local", workspace: here, indexed: true },
      { session: "old", workspace: here, indexed: false },
    ]);
    const listed = await listSessionTapes(store);
    assert.deepEqual(
      listed.map(({ sessionId, workspace }) => ({ sessionId, workspace })).sort((a, b) => String(a.sessionId).localeCompare(String(b.sessionId))),
      [
        { sessionId: "cli:local", workspace: resolveWorkspace(here) },
        { sessionId: null, workspace: null },
      ],
    );
  });

  it("finds a session by its id, in another workspace too when it is the only one", async () => {
    const store = await storeWith([{ session: "telegram:42", workspace: there, indexed: true }]);
    const found = await findSessionTape(store, "telegram:42", here);
    assert.deepEqual(found, { tape: sessionTapeName("telegram:42", there), sessionId: "telegram:42", workspace: resolveWorkspace(there) });
  });

  it("prefers the current workspace's tape when the session is in several", async () => {
    const store = await storeWith([
      { session: "cli:local", workspace: there, indexed: true },
      { session: "cli:local", workspace: here, indexed: true },
    ]);
    assert.equal((await findSessionTape(store, "cli:local", here)).tape, sessionTapeName("cli:local", here));
  });

  it("asks for a workspace when the session is in several others", async () => {
    const third = tempDir("third");
    const store = await storeWith([
      { session: "cli:local", workspace: there, indexed: true },
      { session: "cli:local", workspace: third, indexed: false },
    ]);
    await assert.rejects(findSessionTape(store, "cli:local", here), bubError("invalid_input", /has tapes in 2 workspaces.*— pass -w <workspace> or the tape name$/));
  });

  it("finds a tape written before the index by the session half of its name, or by its tape name", async () => {
    const store = await storeWith([{ session: "old-session", workspace: there, indexed: false }]);
    const tape = sessionTapeName("old-session", there);
    assert.deepEqual(await findSessionTape(store, "old-session", here), { tape, sessionId: "old-session", workspace: null });
    assert.deepEqual(await findSessionTape(store, tape, here), { tape, sessionId: null, workspace: null });
  });

  it("says how to see the sessions when none matches", async () => {
    const store = await storeWith([]);
    await assert.rejects(findSessionTape(store, "nope", here), bubError("not_found", 'No tape for session "nope" — run `bub tape list` to see the sessions and their tape names'));
  });
});
