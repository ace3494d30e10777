import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { Settings, defineSettings, emptyConfigFile } from "../../src/config/settings.ts";
import { agentSettings, channelSettings } from "../../src/builtin/settings.ts";

function settings(env: NodeJS.ProcessEnv = {}): Settings {
  return new Settings(emptyConfigFile("/nonexistent/config.yml"), env);
}

/** What the admission hook reads for every message. */
const admission = (from: Settings) => from.getValue("admission", "concurrent");

describe("Settings.getValue, read repeatedly (remembered answers)", () => {
  it("answers what getValue answers, and keeps answering it from the resolved section", async () => {
    const store = settings({ BUB_ADMISSION: "follow_up" });
    store.register(agentSettings);
    store.register(channelSettings);
    await store.prepare();
    for (let index = 0; index < 3; index++) assert.equal(store.getValue("admission", "concurrent"), "follow_up");
    assert.equal(store.getValue("stream_output", false), false);
  });

  it("sees a reload with another environment", async () => {
    const store = settings({ BUB_ADMISSION: "follow_up" });
    store.register(channelSettings);
    await store.prepare();
    assert.equal(admission(store), "follow_up");
    store.reload(store.file, { BUB_ADMISSION: "steer" });
    assert.equal(admission(store), "steer");
  });

  it("answers the fallback until the section is registered and loaded, then its value", async () => {
    const store = settings({ BUB_ADMISSION: "steer" });
    assert.equal(admission(store), "concurrent");
    store.register(channelSettings);
    assert.equal(admission(store), "concurrent", "registered but not loaded: getValue skips it");
    await store.prepare();
    assert.equal(admission(store), "steer");
  });

  it("follows a section registered again (unloaded, then loaded with its new schema)", async () => {
    const store = settings();
    const first = defineSettings({ id: "mine", section: null, schema: z.object({ admission: z.string().default("follow_up") }) });
    store.register(first);
    await store.prepare();
    assert.equal(admission(store), "follow_up");
    const second = defineSettings({ id: "mine", section: null, schema: () => z.object({ admission: z.string().default("steer") }) });
    store.register(second);
    assert.equal(admission(store), "concurrent");
    await store.prepare();
    assert.equal(admission(store), "steer");
  });

  it("honours section order: an earlier root section that declares the key wins once it is loaded", async () => {
    const store = settings();
    const early = defineSettings({ id: "early", section: null, schema: () => z.object({ admission: z.string().default("steer") }) });
    const late = defineSettings({ id: "late", section: null, schema: z.object({ admission: z.string().default("follow_up") }) });
    store.register(early);
    store.register(late);
    await store.load(late);
    assert.equal(admission(store), "follow_up", "the earlier section is not loaded yet");
    await store.prepare();
    for (let index = 0; index < 3; index++) assert.equal(admission(store), "steer");
  });

  it("switches between Settings instances", async () => {
    const one = settings({ BUB_ADMISSION: "follow_up" });
    const two = settings({ BUB_ADMISSION: "steer" });
    for (const store of [one, two]) {
      store.register(channelSettings);
      await store.prepare();
    }
    assert.deepEqual([admission(one), admission(two), admission(one)], ["follow_up", "steer", "follow_up"]);
  });

  it("remembers dotted paths and missing ones, and still throws for a missing one without a fallback", async () => {
    const store = settings({ BUB_SPILL_THRESHOLD: "10" });
    store.register(agentSettings);
    await store.prepare();
    assert.equal(store.getValue("nothing.here", 1), 1);
    assert.throws(() => store.getValue("nothing.here"), /No setting named 'nothing.here'/);
    store.register(defineSettings({ id: "nested", section: "nothing", schema: z.object({ here: z.number().default(2) }) }));
    await store.prepare();
    assert.equal(store.getValue("nothing.here", 1), 2);
  });
});
