// `~` expansion, shared by every setting, option and tool path that accepts one.
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { expandHome } from "../../src/config/paths.ts";
import { toNpmSpec } from "../../src/builtin/commands/plugin-project.ts";
import { sqlitePathFromDsn } from "../../src/tape/store-from-settings.ts";

describe("expandHome", () => {
  it("expands ~ and ~/x to the home directory", () => {
    assert.equal(expandHome("~", "/home/me"), "/home/me");
    assert.equal(expandHome("~/", "/home/me"), "/home/me");
    assert.equal(expandHome("~/.bub/tapes", "/home/me"), join("/home/me", ".bub", "tapes"));
    assert.equal(expandHome("~/x"), join(homedir(), "x"));
  });

  it("leaves ~user, a ~ inside a name and every other path as they are", () => {
    for (const path of ["~bob", "~bob/notes", "~.bub", "./~/x", "a/~/b", "/abs/~", "relative", ""]) {
      assert.equal(expandHome(path, "/home/me"), path);
    }
  });

  it("is what the path settings and commands use", () => {
    assert.equal(sqlitePathFromDsn("~/bub.db"), join(homedir(), "bub.db"));
    assert.equal(sqlitePathFromDsn("~bob/bub.db"), join(process.cwd(), "~bob", "bub.db"));
    assert.equal(toNpmSpec("~/plugin", "/work"), `file:${join(homedir(), "plugin")}`);
    assert.equal(toNpmSpec("~bob/plugin", "/work"), `file:${join("/work", "~bob", "plugin")}`);
  });
});
