// fs.read / fs.write / fs.edit: workspace-relative and outside paths, exact messages,
// binary and oversized files, missing files and edits without a match.
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { FS_READ_MAX_BYTES, fsTools } from "../../../src/tools/builtin/fs.ts";
import { tempDir } from "../../support/temp.ts";
import { call, errorOf, toolContext } from "../support/tool-context.ts";

describe("fs tools", () => {
  const tools = fsTools();
  let root: { path: string; cleanup: () => Promise<void> };
  let workspace: string;
  const context = () => toolContext({}, { workspace: workspace });

  before(async () => {
    root = await tempDir("bub-fs-");
    workspace = join(root.path, "ws");
    mkdirSync(workspace);
  });
  after(() => root.cleanup());

  it("reads a workspace file without its trailing newline, by line offset and limit", async () => {
    writeFileSync(join(workspace, "a.txt"), "one\ntwo\r\nthree\n");
    assert.equal(await call(tools, "fs.read", { path: "a.txt" }, context()), "one\ntwo\nthree");
    assert.equal(await call(tools, "fs.read", { path: "a.txt", offset: 1, limit: 1 }, context()), "two");
    assert.equal(await call(tools, "fs.read", { path: "a.txt", offset: 9 }, context()), "");
  });

  it("reads paths outside the workspace and names the resolved path in errors", async () => {
    writeFileSync(join(root.path, "outside.txt"), "out there\n");
    assert.equal(await call(tools, "fs.read", { path: "../outside.txt" }, context()), "out there");
    assert.equal(await call(tools, "fs.read", { path: join(root.path, "outside.txt") }, context()), "out there");
    assert.equal(await errorOf(call(tools, "fs.read", { path: "../nope/missing.txt" }, context())), `file not found: ${join(root.path, "nope", "missing.txt")}`);
  });

  it("refuses relative paths when no workspace is known", async () => {
    assert.equal(await errorOf(call(tools, "fs.read", { path: "a.txt" }, toolContext({}))), "relative path 'a.txt' is not allowed without a workspace");
  });

  it("refuses binary files and directories", async () => {
    writeFileSync(join(workspace, "image.bin"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    assert.equal(
      await errorOf(call(tools, "fs.read", { path: "image.bin" }, context())),
      `${join(workspace, "image.bin")} is a binary file (6 bytes); fs.read reads text files only`,
    );
    writeFileSync(join(workspace, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    assert.match(await errorOf(call(tools, "fs.read", { path: "latin1.txt" }, context())), /is not UTF-8 text \(4 bytes\)/);
    assert.equal(await errorOf(call(tools, "fs.read", { path: "." }, context())), `${workspace} is a directory, not a file`);
  });

  it("asks for offset and limit on files over the size limit, and reads them in parts", async () => {
    const line = "x".repeat(99);
    const count = Math.ceil(FS_READ_MAX_BYTES / 100) + 10;
    writeFileSync(join(workspace, "big.log"), Array.from({ length: count }, (_, index) => `${index} ${line}`).join("\n"));
    const message = await errorOf(call(tools, "fs.read", { path: "big.log" }, context()));
    assert.match(message, /big\.log is [\d,]+ bytes, more than fs\.read returns at once \(1,048,576 bytes\); read it in parts with offset and limit/);
    assert.equal(await call(tools, "fs.read", { path: "big.log", offset: 5000, limit: 2 }, context()), `5000 ${line}\n5001 ${line}`);
  });

  it("writes files, creating parent directories, and returns the absolute path", async () => {
    assert.equal(await call(tools, "fs.write", { path: "deep/er/new.txt", content: "héllo" }, context()), `wrote: ${join(workspace, "deep/er/new.txt")}`);
    assert.equal(readFileSync(join(workspace, "deep/er/new.txt"), "utf8"), "héllo");
    const outside = join(root.path, "w", "x.txt");
    assert.equal(await call(tools, "fs.write", { path: outside, content: "" }, context()), `wrote: ${outside}`);
    assert.equal(readFileSync(outside, "utf8"), "");
  });

  it("edits every occurrence from the start line on", async () => {
    const file = join(workspace, "edit.txt");
    writeFileSync(file, "a hello\nb hello\nc hello\n");
    assert.equal(await call(tools, "fs.edit", { path: "edit.txt", old: "hello", new: "world", start: 1 }, context()), `edited: ${file}`);
    assert.equal(readFileSync(file, "utf8"), "a hello\nb world\nc world");
    assert.equal(await call(tools, "fs.edit", { path: "edit.txt", old: "a hello", new: "$& $1" }, context()), `edited: ${file}`);
    assert.equal(readFileSync(file, "utf8"), "$& $1\nb world\nc world", "replacement text is taken literally");
  });

  it("names the real file when fs.edit goes through a symlink, and keeps the link", async () => {
    const real = join(root.path, "real-target.txt");
    writeFileSync(real, "keep me\n");
    const link = join(workspace, "link.txt");
    symlinkSync(real, link);
    const answer = await call(tools, "fs.edit", { path: "link.txt", old: "keep", new: "changed" }, context());
    assert.equal(answer, `edited: ${realpathSync(real)} (through the symlink ${link})`);
    assert.equal(readFileSync(real, "utf8"), "changed me");
    assert.equal(lstatSync(link).isSymbolicLink(), true, "the link is still a link");
  });

  it("fs.write through a dangling link, a chain or a linked folder creates the target and names it; a loop is one clear error", async () => {
    const outside = join(root.path, "write-out");
    mkdirSync(outside);
    symlinkSync(join(outside, "new.txt"), join(workspace, "dangling.txt"));
    symlinkSync("chain2", join(workspace, "chain1"));
    symlinkSync("../write-out/chained.txt", join(workspace, "chain2"));
    symlinkSync(join(outside, "sub"), join(workspace, "gone-dir"));
    assert.equal(await call(tools, "fs.write", { path: "dangling.txt", content: "a" }, context()), `wrote: ${join(outside, "new.txt")} (through the symlink ${join(workspace, "dangling.txt")})`);
    assert.equal(await call(tools, "fs.write", { path: "chain1", content: "b" }, context()), `wrote: ${join(outside, "chained.txt")} (through the symlink ${join(workspace, "chain1")})`);
    assert.equal(await call(tools, "fs.write", { path: "gone-dir/x/y.txt", content: "c" }, context()), `wrote: ${join(outside, "sub", "x", "y.txt")} (through the symlink ${join(workspace, "gone-dir", "x", "y.txt")})`);
    assert.deepEqual([readFileSync(join(outside, "new.txt"), "utf8"), readFileSync(join(outside, "chained.txt"), "utf8"), readFileSync(join(outside, "sub", "x", "y.txt"), "utf8")], ["a", "b", "c"]);
    assert.equal(lstatSync(join(workspace, "dangling.txt")).isSymbolicLink(), true, "the link is still a link");

    symlinkSync("loop2", join(workspace, "loop1"));
    symlinkSync("loop1", join(workspace, "loop2"));
    const error = await errorOf(call(tools, "fs.write", { path: "loop1", content: "x" }, context()));
    assert.match(error, new RegExp(`${join(workspace, "loop1")}: too many levels of symbolic links \\(more than 40, a loop\\?\\)`));
  });

  it("reports an edit whose text is not found, and a missing file", async () => {
    const file = join(workspace, "edit2.txt");
    writeFileSync(file, "alpha\nbeta\n");
    assert.equal(await errorOf(call(tools, "fs.edit", { path: "edit2.txt", old: "alpha", new: "x", start: 1 }, context())), `'alpha' not found in ${file} from line 1`);
    assert.equal(readFileSync(file, "utf8"), "alpha\nbeta\n", "the file is untouched");
    assert.equal(await errorOf(call(tools, "fs.edit", { path: "gone.txt", old: "a", new: "b" }, context())), `file not found: ${join(workspace, "gone.txt")}`);
  });

  it("refuses a FIFO, a device, a socket and a directory in fs.read, fs.edit and fs.write without waiting on them", async () => {
    const fifo = join(workspace, "pipe");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    // Opening a FIFO for reading waits for a writer: the turn would hang here.
    assert.equal(await errorOf(call(tools, "fs.read", { path: "pipe" }, context())), `${fifo} is a FIFO (named pipe), not a regular file; fs.read works on regular files only`);
    assert.equal(await errorOf(call(tools, "fs.edit", { path: "pipe", old: "a", new: "b" }, context())), `${fifo} is a FIFO (named pipe), not a regular file; fs.edit works on regular files only`);
    assert.equal(await errorOf(call(tools, "fs.write", { path: "pipe", content: "x" }, context())), `${fifo} is a FIFO (named pipe), not a regular file; fs.write works on regular files only`);
    assert.ok(Date.now() - started < 2000, "no call waited on the FIFO");
    assert.ok(lstatSync(fifo).isFIFO(), "the FIFO is left as it was");

    assert.equal(await errorOf(call(tools, "fs.read", { path: "/dev/zero" }, context())), "/dev/zero is a device, not a regular file; fs.read works on regular files only");
    assert.equal(await errorOf(call(tools, "fs.write", { path: "/dev/null", content: "x" }, context())), "/dev/null is a device, not a regular file; fs.write works on regular files only");
    assert.equal(await errorOf(call(tools, "fs.edit", { path: "/dev/zero", old: "a", new: "b" }, context())), "/dev/zero is a device, not a regular file; fs.edit works on regular files only");

    const socketPath = join(workspace, "sock");
    const server = createServer().listen(socketPath);
    await once(server, "listening");
    try {
      assert.equal(await errorOf(call(tools, "fs.read", { path: "sock" }, context())), `${socketPath} is a socket, not a regular file; fs.read works on regular files only`);
    } finally {
      server.close();
    }
    mkdirSync(join(workspace, "folder"));
    assert.equal(await errorOf(call(tools, "fs.edit", { path: "folder", old: "a", new: "b" }, context())), `${join(workspace, "folder")} is a directory, not a file`);
    assert.equal(await errorOf(call(tools, "fs.write", { path: "folder", content: "x" }, context())), `${join(workspace, "folder")} is a directory, not a file`);
  });

  it("fs.write fails once, without hanging, where folders cannot be created", { skip: process.platform !== "linux" }, async () => {
    // Node's recursive mkdir never settles for /proc/<missing>/...: the turn would hang.
    assert.equal(
      await errorOf(call(tools, "fs.write", { path: "/proc/bub-fs-test/sub/file.txt", content: "x" }, context())),
      "cannot create the folder /proc/bub-fs-test/sub: this file system does not allow creating /proc/bub-fs-test",
    );
    writeFileSync(join(workspace, "plainfile"), "x");
    assert.equal(
      await errorOf(call(tools, "fs.write", { path: "plainfile/inner/file.txt", content: "x" }, context())),
      `cannot create the folder ${join(workspace, "plainfile", "inner")}: ${join(workspace, "plainfile")} is a file, not a folder`,
    );
    assert.equal(await call(tools, "fs.write", { path: "new/deep/er/file.txt", content: "x" }, context()), `wrote: ${join(workspace, "new", "deep", "er", "file.txt")}`);
  });

  it("never returns more than the byte bound, whatever the limit or the length of a line", async () => {
    // One line longer than the bound: the result is cut there, with where to read on.
    writeFileSync(join(workspace, "one-line.txt"), `${"y".repeat(FS_READ_MAX_BYTES + 5000)}\nnext`);
    const cut = String(await call(tools, "fs.read", { path: "one-line.txt", limit: 1_000_000 }, context()));
    assert.equal(cut, `${"y".repeat(FS_READ_MAX_BYTES)}\n[fs.read stopped after 1,048,576 bytes, in line 0, which is cut there; read on with offset=1]`);
    assert.equal(await call(tools, "fs.read", { path: "one-line.txt", offset: 1, limit: 5 }, context()), "next");
    // Many short lines and a huge limit: stopped at the bound, between two lines.
    const line = "z".repeat(1023);
    writeFileSync(join(workspace, "many.txt"), Array.from({ length: 2000 }, () => line).join("\r\n"));
    const many = String(await call(tools, "fs.read", { path: "many.txt", offset: 10, limit: 100_000 }, context()));
    const shown = many.split("\n");
    assert.equal(shown.at(-1), "[fs.read stopped after 1,048,576 bytes, in line 1035, which is cut there; read on with offset=1036]");
    assert.ok(Buffer.byteLength(many) < FS_READ_MAX_BYTES + 2000);
    assert.equal(shown.length - 1, 1025 + 1, "1025 whole lines (1023 bytes each) from offset 10, then 1 byte of line 1035");
    assert.equal(shown.at(-2), "z");
    assert.equal(await call(tools, "fs.read", { path: "many.txt", offset: 1998, limit: 5 }, context()), `${line}\n${line}`);
  });

  it("validates arguments", async () => {
    assert.equal(await errorOf(call(tools, "fs.read", { path: "a.txt", offset: -1 }, context())), "Tool 'fs.read' argument validation failed.");
    assert.equal(await errorOf(call(tools, "fs.read", {}, context())), "Tool 'fs.read' argument validation failed.");
  });
});
