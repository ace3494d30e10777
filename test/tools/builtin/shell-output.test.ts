// The bounded output buffer of a shell: head and tail kept by UTF-8 bytes, whole characters,
// a notice counting what was cut, and reads by offset across the cut.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BoundedOutput, DEFAULT_SHELL_OUTPUT_MAX_BYTES } from "../../../src/tools/builtin/shell-output.ts";

const NOTICE = /\n\[\.\.\. ([\d,]+) bytes? \(([\d,]+) line breaks?\) of output cut here: only the first ([\d,]+) bytes? and the last ([\d,]+) bytes? are kept \(bash_output_max_bytes\) \.\.\.\]\n/;

function parts(text: string): { head: string; tail: string; cutBytes: number; cutLines: number } {
  const match = NOTICE.exec(text);
  assert.ok(match, `no cut notice in ${JSON.stringify(text.slice(0, 200))}`);
  return {
    head: text.slice(0, match.index),
    tail: text.slice(match.index + match[0].length),
    cutBytes: Number(match[1]!.replaceAll(",", "")),
    cutLines: Number(match[2]!.replaceAll(",", "")),
  };
}

describe("BoundedOutput", () => {
  it("keeps everything, without a notice, up to the bound", () => {
    const output = new BoundedOutput(16);
    output.push("0123456789");
    output.push("abcdef");
    assert.equal(output.text(), "0123456789abcdef");
    assert.equal(output.cutBytes, 0);
    assert.deepEqual(output.read(0), { text: "0123456789abcdef", next: 16 });
  });

  it("keeps the first and the last half past the bound and counts the bytes and line breaks cut", () => {
    const output = new BoundedOutput(10);
    const whole = "line1\nline2\nline3\nline4\n";
    for (const char of whole) output.push(char);
    const { head, tail, cutBytes, cutLines } = parts(output.text());
    assert.equal(head, "line1");
    assert.equal(tail, "line4\n".slice(1));
    assert.equal(cutBytes, whole.length - 10);
    assert.equal(cutLines, whole.slice(5, -5).split("\n").length - 1);
    assert.equal(head + whole.slice(5, -5) + tail, whole);
    assert.equal(output.keptBytes, 10);
  });

  it("counts bytes, not characters, and never splits a character at either cut", () => {
    // "é" is 2 bytes, "你" is 3, "😀" is 4 (two UTF-16 units).
    const whole = "ab你é😀cd你xyz😀";
    const output = new BoundedOutput(9);
    output.push(whole);
    const { head, tail, cutBytes } = parts(output.text());
    // 4 bytes of head: "你" would end at byte 5, so the head stops before it.
    assert.equal(head, "ab");
    assert.equal(tail, "z😀");
    assert.equal(Buffer.byteLength(head) + cutBytes + Buffer.byteLength(tail), Buffer.byteLength(whole));
    // A tail cut that lands inside a character moves forward to the next one.
    const inside = new BoundedOutput(6);
    inside.push("abc");
    inside.push("é你x");
    const cut = parts(inside.text());
    assert.equal(cut.head, "abc");
    assert.equal(cut.tail, "x");
    assert.equal(cut.cutBytes, 5);
    assert.ok(!output.text().includes("\ufffd") && !inside.text().includes("\ufffd"));
  });

  it("stays bounded however much arrives, in pieces of any size", () => {
    const output = new BoundedOutput(1000);
    let total = 0;
    for (let index = 0; index < 20_000; index++) {
      const piece = index % 7 === 0 ? "x".repeat(5000) : `${index}\n`;
      output.push(piece);
      total += piece.length;
      assert.ok(output.keptBytes <= 1000);
    }
    const { head, tail, cutBytes } = parts(output.text());
    assert.equal(Buffer.byteLength(head), 500);
    assert.equal(Buffer.byteLength(tail), 500);
    assert.equal(cutBytes, total - 1000);
  });

  it("reads by offsets into the whole output: a notice stands for the cut part, then the tail", () => {
    const output = new BoundedOutput(8);
    output.push("abcd");
    assert.deepEqual(output.read(0), { text: "abcd", next: 4 });
    output.push("efgh");
    assert.deepEqual(output.read(4), { text: "efgh", next: 8 });
    output.push("ijklmnop");
    // 16 characters so far: "abcd" kept, "efghijkl" cut, "mnop" kept.
    const fromHead = output.read(4);
    assert.equal(fromHead.next, 16);
    assert.ok(fromHead.text.startsWith("\n[... 8 bytes (0 line breaks) of output cut here"), fromHead.text);
    assert.ok(fromHead.text.endsWith("]\nmnop"));
    // A poller that had read up to 8 sees only the characters it missed counted.
    const fromMiddle = output.read(8);
    assert.ok(fromMiddle.text.startsWith("\n[... 4 characters of output cut here"), fromMiddle.text);
    assert.equal(fromMiddle.next, 16);
    assert.deepEqual(output.read(13), { text: "nop", next: 16 });
    assert.deepEqual(output.read(100), { text: "", next: 16 });
    assert.deepEqual(output.read(0, 2), { text: "ab", next: 2 });
    assert.deepEqual(output.read(4, 0), { text: "", next: 4 });
    const limited = output.read(2, 3);
    assert.equal(limited.next, 13);
    assert.ok(limited.text.startsWith("cd\n[... 8 bytes"));
    assert.ok(limited.text.endsWith("]\nm"));
  });

  it("defaults to 1 MiB", () => {
    assert.equal(new BoundedOutput().maxBytes, DEFAULT_SHELL_OUTPUT_MAX_BYTES);
    assert.equal(DEFAULT_SHELL_OUTPUT_MAX_BYTES, 1024 * 1024);
  });
});
