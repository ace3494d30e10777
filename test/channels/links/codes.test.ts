import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CODE_TTL_MS, emptyLinkState, issueCode, MAX_FAILURES, MAX_ISSUED, personOf, redeemCode, removeIdentity } from "../../../src/channels/links/codes.ts";

describe("link codes", () => {
  it("link the identity that asked with the one that typed the code", () => {
    const state = emptyLinkState();
    const code = issueCode(state, "cli:alice", 1_000);
    const person = redeemCode(state, code.toLowerCase(), "telegram:7", 2_000);
    assert.deepEqual(person.identities, ["cli:alice", "telegram:7"]);
    assert.equal(personOf(state, "telegram:7")?.id, person.id);
    assert.ok(!JSON.stringify(state).includes(code), "only the code's hash is kept");
  });

  it("work once", () => {
    const state = emptyLinkState();
    const code = issueCode(state, "cli:alice", 0);
    redeemCode(state, code, "telegram:7", 1);
    assert.throws(() => redeemCode(state, code, "telegram:8", 2), /wrong, expired or used/);
    assert.equal(personOf(state, "telegram:8"), null);
  });

  it("expire after the time to live", () => {
    const state = emptyLinkState();
    const code = issueCode(state, "cli:alice", 0);
    assert.throws(() => redeemCode(state, code, "telegram:7", CODE_TTL_MS), /wrong, expired or used/);
    const fresh = issueCode(state, "cli:alice", CODE_TTL_MS);
    assert.equal(redeemCode(state, fresh, "telegram:7", 2 * CODE_TTL_MS - 1).identities.length, 2);
  });

  it("must be typed on another identity than the one shown", () => {
    const state = emptyLinkState();
    const code = issueCode(state, "telegram:7", 0);
    assert.throws(() => redeemCode(state, code, "telegram:7", 1), /other channel/);
  });

  it("replace the identity's earlier code", () => {
    const state = emptyLinkState();
    const first = issueCode(state, "cli:alice", 0);
    const second = issueCode(state, "cli:alice", 1);
    assert.throws(() => redeemCode(state, first, "telegram:7", 2), /wrong/);
    assert.equal(redeemCode(state, second, "telegram:7", 3).identities.length, 2);
  });

  it("are rate-limited: issuing, and wrong codes (the right one is refused too until the window passes)", () => {
    const state = emptyLinkState();
    for (let n = 0; n < MAX_ISSUED; n++) issueCode(state, "cli:alice", n);
    assert.throws(() => issueCode(state, "cli:alice", MAX_ISSUED), /Too many link codes/);
    const code = issueCode(state, "telegram:9", 0);
    for (let n = 0; n < MAX_FAILURES; n++) assert.throws(() => redeemCode(state, "AAAAAAAA", "telegram:7", n), /wrong/);
    assert.throws(() => redeemCode(state, code, "telegram:7", MAX_FAILURES), /Too many wrong link codes/);
    assert.equal(personOf(state, "telegram:7"), null);
  });

  it("move an identity linked elsewhere to the new person; unlinking leaves no person of one", () => {
    const state = emptyLinkState();
    redeemCode(state, issueCode(state, "cli:alice", 0), "telegram:7", 1);
    redeemCode(state, issueCode(state, "cli:bob", 2), "telegram:7", 3);
    assert.deepEqual(personOf(state, "telegram:7")?.identities, ["cli:bob", "telegram:7"]);
    assert.equal(personOf(state, "cli:alice"), null);
    assert.equal(removeIdentity(state, "cli:bob"), true);
    assert.equal(personOf(state, "telegram:7"), null);
  });
});
