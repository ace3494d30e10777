// Control characters from a tape, a tool or a model shown as visible escapes, never sent to the terminal.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { escapeControlChars } from "../../src/kernel/terminal-text.ts";

describe("escapeControlChars", () => {
  it("shows an OSC 52 clipboard write and a screen clear as text", () => {
    const shown = escapeControlChars("before\x1b]52;c;aGVsbG8=\x07\x1b[2Jafter");
    assert.equal(shown, "before\\x1b]52;c;aGVsbG8=\\x07\\x1b[2Jafter");
    assert.doesNotMatch(shown, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });

  it("keeps newlines, tabs and CRLF line ends; escapes a lone carriage return, backspace, DEL and C1 controls", () => {
    assert.equal(escapeControlChars("a\tb\nc\r\nd"), "a\tb\nc\r\nd");
    assert.equal(escapeControlChars("safe\rrm -rf"), "safe\\x0drm -rf");
    assert.equal(escapeControlChars("x\by\x7fz\x9b2J\x00"), "x\\x08y\\x7fz\\x9b2J\\x00");
  });

  it("leaves other text, Unicode included, as it is", () => {
    const text = "héllo · ⎿ 日本語 🙂";
    assert.equal(escapeControlChars(text), text);
  });
});
