// Redacting text that arrives in pieces: a secret split over deltas is caught, the rest of
// the text comes out unchanged and in order.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StreamRedactor } from "../../src/config/stream-redaction.ts";
import type { Secret } from "../../src/config/redaction.ts";

const KEY = "sk-stream-0123456789";
const secrets: Secret[] = [{ name: "api_key", value: KEY }];

/** Every piece pushed, then the flush, joined. */
function through(pieces: readonly string[]): { shown: string[]; text: string } {
  const stream = new StreamRedactor(() => secrets);
  const shown = [...pieces.map((piece) => stream.push(piece)), stream.flush()];
  return { shown, text: shown.join("") };
}

describe("StreamRedactor", () => {
  it("redacts a secret cut anywhere into pieces", () => {
    for (let cut = 1; cut < KEY.length; cut++) {
      const { shown, text } = through(["key: ", KEY.slice(0, cut), KEY.slice(cut), " ok"]);
      assert.equal(text, "key: [redacted:api_key] ok", `cut at ${cut}`);
      assert.deepEqual(shown, ["key: ", "", "[redacted:api_key]", " ok", ""], `cut at ${cut}`);
    }
  });

  it("redacts a secret sent one character at a time", () => {
    assert.equal(through([..."a " + KEY + " b"]).text, "a [redacted:api_key] b");
  });

  it("holds back only an end that could start a secret, and shows it when the stream ends", () => {
    const stream = new StreamRedactor(() => secrets);
    assert.equal(stream.push("plain text"), "plain text");
    assert.equal(stream.push(" then sk-str"), " then ");
    assert.equal(stream.push("eet"), "sk-street");
    assert.equal(stream.push(" sk-s"), " ");
    assert.equal(stream.flush(), "sk-s");
    assert.equal(stream.flush(), "");
  });

  it("passes everything through when no secret is known", () => {
    const stream = new StreamRedactor(() => []);
    assert.equal(stream.push("sk-"), "sk-");
  });
});
