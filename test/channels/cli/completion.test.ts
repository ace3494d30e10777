import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { completeCommand, displayToolName } from "../../../src/channels/cli/completion.ts";

describe("completeCommand", () => {
  const tools = ["fs.read", "fs.write", "bash", "web.fetch"];

  it("completes only a line that starts with a comma", () => {
    assert.deepEqual(completeCommand("fs.r", tools), [[], "fs.r"]);
    assert.deepEqual(completeCommand(",fs.r", tools), [[",fs.read"], ",fs.r"]);
  });

  it("offers the REPL's commands with the tools, once each, sorted by section then name", () => {
    const [all] = completeCommand(",", [...tools, "help"]);
    assert.deepEqual(all, [",bash", ",exit", ",help", ",quit", ",thinking", ",fs.read", ",fs.write", ",web.fetch"]);
    assert.deepEqual(completeCommand(",th", []), [[",thinking"], ",th"]);
  });
});

describe("displayToolName", () => {
  it("shows the runtime name of a model-facing tool name, and any other name as it is", () => {
    assert.equal(displayToolName("fs_read", ["fs.read", "bash"]), "fs.read");
    assert.equal(displayToolName("bash", ["fs.read", "bash"]), "bash");
    assert.equal(displayToolName("fs_read", ["fs_read", "fs.read"]), "fs_read", "an exact name wins");
    assert.equal(displayToolName("mystery", []), "mystery");
  });
});
