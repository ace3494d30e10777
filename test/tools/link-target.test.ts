// Where a host path really leads: every symbolic link followed, dangling ones and links in
// the folders above included, relative targets from the link's folder, loops refused.
import assert from "node:assert/strict";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BubError } from "../../src/kernel/errors.ts";
import { linkTarget, MAX_SYMBOLIC_LINKS } from "../../src/tools/link-target.ts";
import { tempDir } from "../support/temp.ts";

describe("linkTarget", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let ws: string;
  let out: string;
  before(async () => {
    dir = await tempDir("bub-link-target-");
    ws = join(dir.path, "ws");
    out = join(dir.path, "out");
    await mkdir(join(ws, "sub"), { recursive: true });
    await mkdir(out);
    await writeFile(join(ws, "plain.txt"), "x");
  });
  after(() => dir.cleanup());

  it("leaves a path without links as it is, existing or not", async () => {
    assert.equal(await linkTarget(join(ws, "plain.txt")), join(ws, "plain.txt"));
    assert.equal(await linkTarget(join(ws, "sub", "new", "deep.txt")), join(ws, "sub", "new", "deep.txt"));
    assert.equal(await linkTarget(`${ws}//sub/./x.txt`), join(ws, "sub", "x.txt"));
    assert.equal(await linkTarget("/"), "/");
  });

  it("follows a dangling link to where it points, absolute or relative to the link's folder", async () => {
    await symlink(join(out, "new.txt"), join(ws, "notes.txt"));
    assert.equal(await linkTarget(join(ws, "notes.txt")), join(out, "new.txt"));
    await symlink(join("..", "..", "out", "rel.txt"), join(ws, "sub", "rel-link"));
    assert.equal(await linkTarget(join(ws, "sub", "rel-link")), join(out, "rel.txt"));
  });

  it("follows a chain of links, each hop from its own folder", async () => {
    await symlink("hop2", join(ws, "hop1"));
    await symlink(join("sub", "hop3"), join(ws, "hop2"));
    await symlink(join("..", "..", "out", "chain.txt"), join(ws, "sub", "hop3"));
    assert.equal(await linkTarget(join(ws, "hop1")), join(out, "chain.txt"));
  });

  it("follows links in the folders above, dangling folder links included", async () => {
    await symlink(out, join(ws, "dirlink"));
    assert.equal(await linkTarget(join(ws, "dirlink", "deep.txt")), join(out, "deep.txt"));
    await symlink(join(out, "later"), join(ws, "gone"));
    assert.equal(await linkTarget(join(ws, "gone", "a", "b.txt")), join(out, "later", "a", "b.txt"));
    // A target's `..` after a link is that link's target's parent, not a lexical step back.
    await mkdir(join(out, "inner"));
    await symlink(join(out, "inner"), join(ws, "inner-link"));
    await symlink("inner-link/../up.txt", join(ws, "through"));
    assert.equal(await linkTarget(join(ws, "through")), join(out, "up.txt"));
  });

  it("stops a loop, and a chain longer than the bound, with one clear error", async () => {
    await symlink("loopB", join(ws, "loopA"));
    await symlink("loopA", join(ws, "loopB"));
    await assert.rejects(linkTarget(join(ws, "loopA")), (error: unknown) => {
      assert.ok(BubError.isInstance(error));
      assert.equal(error.kind, "invalid_input");
      assert.equal(error.message, `${join(ws, "loopA")}: too many levels of symbolic links (more than ${MAX_SYMBOLIC_LINKS}, a loop?); fix the links or use the file's real path`);
      return true;
    });
    await symlink("self", join(ws, "self"));
    await assert.rejects(linkTarget(join(ws, "self", "below.txt")), /too many levels of symbolic links/);
    await symlink("c2", join(ws, "c1"));
    await symlink("c3", join(ws, "c2"));
    await symlink(join(out, "end.txt"), join(ws, "c3"));
    assert.equal(await linkTarget(join(ws, "c1"), 3), join(out, "end.txt"));
    await assert.rejects(linkTarget(join(ws, "c1"), 2), /more than 2/);
  });

  it("treats a name below a regular file as missing, as writing there would fail", async () => {
    assert.equal(await linkTarget(join(ws, "plain.txt", "below")), join(ws, "plain.txt", "below"));
  });
});
