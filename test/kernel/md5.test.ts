import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { md5Hex } from "../../src/kernel/md5.ts";

describe("md5Hex", () => {
  it("gives the RFC 1321 test-suite digests", () => {
    assert.equal(md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
    assert.equal(md5Hex("a"), "0cc175b9c0f1b6a831c399e269772661");
    assert.equal(md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
    assert.equal(md5Hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
    assert.equal(md5Hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"), "57edf4a22be3c955ac49da2e2107b67a");
  });

  it("matches node:crypto for UTF-8 text of every length around the block boundaries", () => {
    for (let length = 0; length < 300; length++) {
      const text = randomBytes(length).toString("base64").slice(0, length) + (length % 7 === 0 ? "é→🙂" : "");
      assert.equal(md5Hex(text), createHash("md5").update(text, "utf8").digest("hex"), JSON.stringify(text));
    }
  });
});
