// The range a plugin declares, checked with semver's rules before the plugin is imported.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkPluginRequirement } from "../../src/plugins/api-check.ts";
import { IncompatiblePluginError } from "../../src/kernel/plugin-api.ts";

describe("checkPluginRequirement", () => {
  it("lets a plugin in when its bub.api range holds the running API version, and names both when not", async () => {
    assert.equal(await checkPluginRequirement("a", { field: "bub.api", range: "^1.0.0" }, { api: "1.4.2" }), null);
    assert.equal(await checkPluginRequirement("a", { field: "bub.api", range: ">=1 <3 || ^5" }, { api: "2.0.0" }), null);
    const refused = await checkPluginRequirement("a", { field: "bub.api", range: "^2.0.0" }, { api: "1.4.2" });
    assert.ok(refused instanceof IncompatiblePluginError);
    assert.match(refused.message, /\^2\.0\.0/);
    assert.match(refused.message, /1\.4\.2/);
  });

  it("runs plugins on a prerelease of a version their range holds", async () => {
    assert.equal(await checkPluginRequirement("a", { field: "peerDependencies.bub-ts", range: "^0.2.0" }, { package: "0.2.1-beta.1" }), null);
  });

  it("lets in a peer range it cannot read, and refuses a bub.api that is not a range", async () => {
    assert.equal(await checkPluginRequirement("a", { field: "peerDependencies.bub-ts", range: "workspace:*" }, { package: "0.1.0" }), null);
    const refused = await checkPluginRequirement("a", { field: "bub.api", range: "the newest" }, { api: "1.0.0" });
    assert.ok(refused instanceof Error && !(refused instanceof IncompatiblePluginError));
    assert.match(refused.message, /not a version range/);
  });
});
