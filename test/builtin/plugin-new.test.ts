import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { scaffoldNames, writeScaffold } from "../../src/builtin/commands/plugin-new.ts";
import { PLUGIN_API_VERSION } from "../../src/kernel/plugin-api.ts";
import { tempDir } from "../support/temp.ts";

const runtime = { root: "/opt/bub-ts", version: "1.2.3", entry: "file:///opt/bub-ts/dist/index.js" };

describe("bub plugin new", () => {
  it("names the package bub-plugin-<name> and the tool <name>.greet, with or without the prefix", () => {
    assert.deepEqual(scaffoldNames("my-thing"), { plugin: "my-thing", packageName: "bub-plugin-my-thing", tool: "my_thing.greet" });
    assert.deepEqual(scaffoldNames("bub-plugin-hello"), { plugin: "hello", packageName: "bub-plugin-hello", tool: "hello.greet" });
    assert.throws(() => scaffoldNames("Hello"), /'Hello' is not a plugin name\. Use lower-case letters/);
    assert.throws(() => scaffoldNames("1st"), /not a plugin name/);
  });

  it("writes the package with its bub field (plugin and plugin API range) and peer, and links node_modules/bub-ts to a stand-in for the running copy", async () => {
    const dir = await tempDir();
    try {
      const written = await writeScaffold("hello", { dir: join(dir.path, "p") }, runtime);
      const pkg = JSON.parse(await readFile(join(written, "package.json"), "utf8")) as Record<string, any>;
      assert.deepEqual([pkg.name, pkg.type, pkg.bub, pkg.peerDependencies, pkg.devDependencies["bub-ts"], pkg.files], [
        "bub-plugin-hello", "module", { plugins: { hello: "./src/index.ts" }, api: `^${PLUGIN_API_VERSION}` }, { "bub-ts": "^1.2.3" }, "file:.bub-ts", ["src/", "README.md"],
      ]);
      assert.equal(await readlink(join(written, "node_modules", "bub-ts")), join("..", ".bub-ts"));
      assert.match(await readFile(join(written, ".bub-ts", "index.js"), "utf8"), /^export \* from "file:\/\/\/opt\/bub-ts\/dist\/index\.js";$/m);
      assert.match(await readFile(join(written, ".bub-ts", "testing.d.ts"), "utf8"), /^export \* from "\/opt\/bub-ts\/dist\/testing\.js";$/m);
      assert.match(await readFile(join(written, "src", "index.ts"), "utf8"), /name: "hello\.greet"/);
    } finally {
      await dir.cleanup();
    }
  });

  it("refuses a folder that is not empty", async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, "keep.txt"), "mine");
      await assert.rejects(writeScaffold("hello", { dir: dir.path }, runtime), /already exists and is not empty\. Choose another folder with --dir/);
    } finally {
      await dir.cleanup();
    }
  });
});
