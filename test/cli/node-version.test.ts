import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { MINIMUM_NODE, unsupportedNode } from "../../src/cli/node-version.ts";

describe("the Node.js version check of the bin", () => {
  it("matches package.json's engines range", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { engines: { node: string } };
    assert.equal(pkg.engines.node, `>=${MINIMUM_NODE}`);
  });

  it("accepts 22.19 and newer", () => {
    for (const version of ["22.19.0", "22.20.1", "23.0.0", "24.21.0", "30.1.0"]) assert.equal(unsupportedNode(version), null);
  });

  it("names the needed and the running version for anything older", () => {
    assert.equal(unsupportedNode("20.20.2"), "bub needs Node.js >= 22.19; this is 20.20.2");
    assert.equal(unsupportedNode("22.18.9"), "bub needs Node.js >= 22.19; this is 22.18.9");
    assert.match(unsupportedNode("18.0.0") ?? "", /this is 18\.0\.0$/);
  });
});
