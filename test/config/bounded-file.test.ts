// The bounded read of files bub reads on its own: regular files only, never past the bound, a FIFO never waited on.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { closeSync, fstatSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { FileRefusedError, formatByteSize, openRegularFileSync, readBoundedFile, readBoundedTextFile, readBoundedTextFileSync } from "../../src/config/bounded-file.ts";
import { tempDir } from "../support/temp.ts";

const mkfifo = (path: string) => promisify(execFile)("mkfifo", [path]);
const options = { maxBytes: 100, what: "notes.md" };

describe("readBoundedTextFile and its sync twin", () => {
  for (const [name, read] of [
    ["async", (path: string) => readBoundedTextFile(path, options)],
    ["sync", async (path: string) => readBoundedTextFileSync(path, options)],
  ] as const) {
    it(`${name}: reads a file of up to maxBytes, refuses one byte more naming its size, and passes ENOENT on`, async () => {
      const dir = await tempDir();
      try {
        const file = join(dir.path, "notes.md");
        await writeFile(file, "a".repeat(100));
        assert.equal(await read(file), "a".repeat(100));
        await writeFile(file, "a".repeat(101));
        await assert.rejects(read(file), (error: unknown) => {
          assert.ok(error instanceof FileRefusedError);
          assert.equal(error.refusal, "too_large");
          assert.equal(error.message, `notes.md at ${file} is 101 B, over the 100 B bound for notes.md — shorten it`);
          return true;
        });
        await assert.rejects(read(join(dir.path, "missing.md")), { code: "ENOENT" });
      } finally {
        await dir.cleanup();
      }
    });

    it(`${name}: refuses a FIFO without waiting for a writer, a link to /dev/zero and a directory`, async () => {
      const dir = await tempDir();
      try {
        await mkfifo(join(dir.path, "fifo"));
        await symlink("/dev/zero", join(dir.path, "zero"));
        await mkdir(join(dir.path, "folder"));
        for (const [file, kind] of [
          ["fifo", "a FIFO"],
          ["zero", "a character device"],
          ["folder", "a directory"],
        ] as const) {
          const path = join(dir.path, file);
          await assert.rejects(read(path), (error: unknown) => {
            assert.ok(error instanceof FileRefusedError);
            assert.equal(error.refusal, "not_regular");
            assert.equal(error.message, `notes.md at ${path} is not a regular file (${kind}) — replace it with a regular file or remove it`);
            return true;
          });
        }
      } finally {
        await dir.cleanup();
      }
    });
  }

  it("readBoundedFile returns the bytes; the fix text can be given", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "big");
      await writeFile(file, Buffer.alloc(3 * 1024 * 1024, 1));
      await assert.rejects(readBoundedFile(file, { maxBytes: 1024 * 1024, what: "config.yml", tooLargeFix: "trim it" }), {
        message: `config.yml at ${file} is 3 MiB, over the 1 MiB bound for config.yml — trim it`,
      });
      await writeFile(file, Buffer.from([0, 1, 2]));
      assert.deepEqual([...(await readBoundedFile(file, options))], [0, 1, 2]);
    } finally {
      await dir.cleanup();
    }
  });

  it("openRegularFileSync opens a regular file and refuses a FIFO at once", async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, "tape.jsonl"), "{}\n");
      const fd = openRegularFileSync(join(dir.path, "tape.jsonl"), "the tape file");
      assert.equal(fstatSync(fd).size, 3);
      closeSync(fd);
      await mkfifo(join(dir.path, "fifo.jsonl"));
      assert.throws(() => openRegularFileSync(join(dir.path, "fifo.jsonl"), "the tape file"), FileRefusedError);
    } finally {
      await dir.cleanup();
    }
  });

  it("formatByteSize", () => {
    assert.deepEqual([512, 256 * 1024, 64 * 1024 * 1024, 1536 * 1024].map(formatByteSize), ["512 B", "256 KiB", "64 MiB", "1.5 MiB"]);
  });
});
