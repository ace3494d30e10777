import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { Settings, defineSettings, emptyConfigFile } from "../../src/kernel/settings.ts";
import { CachedRootSetting } from "../../src/channels/setting-cache.ts";
import { agentSettings, channelSettings } from "../../src/builtin/settings.ts";

function settings(env: NodeJS.ProcessEnv = {}): Settings {
  return new Settings(emptyConfigFile("/nonexistent/config.yml"), env);
}

describe("CachedRootSetting", () => {
  it("answers what getValue answers, and keeps answering it from the resolved section", async () => {
    const store = settings({ BUB_ADMISSION: "follow_up" });
    store.register(agentSettings);
    store.register(channelSettings);
    await store.prepare();
    const admission = new CachedRootSetting("admission", "concurrent");
    for (let index = 0; index < 3; index++) assert.equal(admission.read(store), "follow_up");
    assert.equal(new CachedRootSetting("stream_output", false).read(store), false);
  });

  it("sees a reload with another environment", async () => {
    const store = settings({ BUB_ADMISSION: "follow_up" });
    store.register(channelSettings);
    await store.prepare();
    const admission = new CachedRootSetting("admission", "concurrent");
    assert.equal(admission.read(store), "follow_up");
    store.reload(store.file, { BUB_ADMISSION: "steer" });
    assert.equal(admission.read(store), "steer");
  });

  it("answers the fallback until the section is registered and loaded, then its value", async () => {
    const store = settings({ BUB_ADMISSION: "steer" });
    const admission = new CachedRootSetting("admission", "concurrent");
    assert.equal(admission.read(store), "concurrent");
    store.register(channelSettings);
    assert.equal(admission.read(store), "concurrent", "registered but not loaded: getValue skips it");
    await store.prepare();
    assert.equal(admission.read(store), "steer");
  });

  it("follows a section registered again (unloaded, then loaded with its new schema)", async () => {
    const store = settings();
    const first = defineSettings({ id: "mine", section: null, schema: z.object({ admission: z.string().default("follow_up") }) });
    store.register(first);
    await store.prepare();
    const admission = new CachedRootSetting("admission", "concurrent");
    assert.equal(admission.read(store), "follow_up");
    const second = defineSettings({ id: "mine", section: null, schema: () => z.object({ admission: z.string().default("steer") }) });
    store.register(second);
    assert.equal(admission.read(store), "concurrent");
    await store.prepare();
    assert.equal(admission.read(store), "steer");
  });

  it("honours section order: an earlier root section that declares the key wins once it is loaded", async () => {
    const store = settings();
    const early = defineSettings({ id: "early", section: null, schema: () => z.object({ admission: z.string().default("steer") }) });
    const late = defineSettings({ id: "late", section: null, schema: z.object({ admission: z.string().default("follow_up") }) });
    store.register(early);
    store.register(late);
    await store.load(late);
    const admission = new CachedRootSetting("admission", "concurrent");
    assert.equal(admission.read(store), store.getValue("admission"));
    await store.prepare();
    // The earlier section is loaded now; reads that could not pin the answer down still
    // asked getValue, so every read agrees with it.
    for (let index = 0; index < 100; index++) assert.equal(admission.read(store), store.getValue("admission"));
    assert.equal(admission.read(store), "steer");
  });

  it("switches between Settings instances", async () => {
    const one = settings({ BUB_ADMISSION: "follow_up" });
    const two = settings({ BUB_ADMISSION: "steer" });
    for (const store of [one, two]) {
      store.register(channelSettings);
      await store.prepare();
    }
    const admission = new CachedRootSetting("admission", "concurrent");
    assert.deepEqual([admission.read(one), admission.read(two), admission.read(one)], ["follow_up", "steer", "follow_up"]);
  });

  it("reads root keys only", () => {
    assert.throws(() => new CachedRootSetting("telegram.token", null), /root keys only/);
  });
});
