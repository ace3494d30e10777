// The output the shell tools keep is bounded (`bash_output_max_bytes`): a command that
// writes tens of megabytes returns its first and last half with a notice, in the foreground
// and polled in the background, and `bash.output`'s offsets still count the whole output.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { bashTools } from "../../../src/tools/builtin/bash.ts";
import { createShellManager, type ShellManager } from "../../../src/tools/builtin/shell-manager.ts";
import { tempDir } from "../../support/temp.ts";
import { call, fakeAgent, toolContext } from "../support/tool-context.ts";

const LINE = "0123456789abcdef\n";
const NOISY = `yes 0123456789abcdef | head -c 20000000`;

function field(text: string, name: string): string {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name}: `));
  assert.ok(line, `no ${name} in ${text.slice(0, 200)}`);
  return line.slice(name.length + 2);
}

describe("bash output bound", () => {
  let workspace: { path: string; cleanup: () => Promise<void> };
  let shells: ShellManager;
  let tools: ReturnType<typeof bashTools>;
  const state = () => ({ session_id: "s1" });
  const context = (maxBytes?: number) =>
    toolContext(state(), { workspace: workspace.path, ...(maxBytes === undefined ? {} : { agent: fakeAgent({ config: { bash_output_max_bytes: maxBytes } }) }) });

  before(async () => {
    workspace = await tempDir("bub-bash-bound-");
    shells = createShellManager({ killGraceMs: 300 });
    tools = bashTools(shells);
  });
  after(async () => {
    await shells.terminateAll();
    await workspace.cleanup();
  });

  it("keeps the first and the last half of a foreground command's output, by default 1 MiB, and says how much was cut", async () => {
    const result = String(await call(tools, "bash", { cmd: NOISY }, context()));
    const match = /\n\[\.\.\. ([\d,]+) bytes \(([\d,]+) line breaks\) of output cut here: only the first 524,288 bytes and the last 524,288 bytes are kept \(bash_output_max_bytes\) \.\.\.\]\n/.exec(result);
    assert.ok(match, result.slice(0, 300));
    assert.equal(Number(match[1]!.replaceAll(",", "")), 20_000_000 - 1024 * 1024);
    const head = result.slice(0, match.index);
    const tail = result.slice(match.index + match[0].length);
    assert.equal(Buffer.byteLength(head), 524_288);
    // 20,000,000 bytes are 1,176,470 whole lines and "0123456789".
    assert.equal(Buffer.byteLength(tail), 524_288);
    assert.ok(head.startsWith(LINE.repeat(3)));
    assert.ok(tail.endsWith("abcdef\n0123456789"));
    const lines = (text: string) => text.split("\n").length - 1;
    assert.equal(lines(head) + Number(match[2]!.replaceAll(",", "")) + lines(tail), 1_176_470);
  });

  it("takes its bound from bash_output_max_bytes", async () => {
    const result = String(await call(tools, "bash", { cmd: NOISY }, context(4096)));
    assert.match(result, /\[\.\.\. 19,995,904 bytes \([\d,]+ line breaks\) of output cut here: only the first 2,048 bytes and the last 2,048 bytes are kept/);
    assert.ok(Buffer.byteLength(result) < 4096 + 200);
  });

  it("bounds a background shell's output and keeps bash.output's offsets counting the whole output", async () => {
    const started = String(await call(tools, "bash", { cmd: NOISY, background: true }, context(1000)));
    const id = started.slice("started: ".length);
    const shell = shells.get(id);
    await shell.closed;
    assert.equal(shell.maxOutputBytes, 1000);
    assert.ok(Buffer.byteLength(shell.output) < 1000 + 200, `kept ${Buffer.byteLength(shell.output)} bytes`);
    const first = String(await call(tools, "bash.output", { shell_id: id, limit: 10 }));
    assert.equal(field(first, "next_offset"), "10");
    assert.ok(first.endsWith("output:\n0123456789"));
    const rest = String(await call(tools, "bash.output", { shell_id: id, offset: 10 }));
    assert.equal(field(rest, "next_offset"), "20000000");
    assert.match(rest, /output:\nabcdef\n0123456789abcdef\n[\s\S]*\[\.\.\. 19,999,000 bytes \([\d,]+ line breaks\) of output cut here/);
    assert.ok(rest.endsWith("abcdef\n0123456789"));
    const done = String(await call(tools, "bash.output", { shell_id: id, offset: 20_000_000 }));
    assert.ok(done.endsWith("next_offset: 20000000\noutput:\n(no output)"));
  });
});
