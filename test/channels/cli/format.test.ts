import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { formatErrorPanel, plainStyle, wrapWords } from "../../../src/channels/cli/format.ts";

describe("wrapping in the chat's boxes", () => {
  it("breaks lines at spaces, never inside a word", () => {
    assert.deepEqual(wrapWords("An Error occurred at stage run_model", 12), ["An Error", "occurred at", "stage", "run_model"]);
    assert.deepEqual(wrapWords("short", 12), ["short"]);
    assert.deepEqual(wrapWords("", 12), [""]);
  });

  it("keeps a line's indentation and cuts only a word longer than the whole width", () => {
    assert.deepEqual(wrapWords("  - path: https://example.com/a/very/long/url", 16), ["  - path:", "https://example.", "com/a/very/long/", "url"]);
  });

  it("draws the error panel without splitting a word", () => {
    const message = "local:m returned HTTP 401: Incorrect API key provided — check the API key (BUB_LOCAL_API_KEY or BUB_API_KEY)";
    const panel = formatErrorPanel(message, 40, plainStyle, true);
    const lines = panel.split("\n");
    assert.ok(lines.every((line) => line.length === lines[0]!.length), panel);
    const body = lines.slice(1, -1).map((line) => line.slice(2, -2).trim());
    assert.equal(body.join(" "), message, "the words come back whole, in order");
  });
});
