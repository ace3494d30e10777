import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineSettings } from "../../src/config/settings.ts";
import { envVariable } from "../../src/kernel/settings-contract.ts";
import { agentSettings, channelSettings, spillSettings } from "../../src/builtin/settings.ts";
import { withConfig } from "./support.ts";

describe("settings from the environment", () => {
  it("reads comma-separated lists, and JSON lists too", async () => {
    await withConfig("fallback_models: [x:y]\n", { BUB_FALLBACK_MODELS: "a:b, c:d,," }, async (config) => {
      assert.deepEqual((await config.settings.load(agentSettings)).fallback_models, ["a:b", "c:d"]);
    });
    await withConfig("", { BUB_FALLBACK_MODELS: '["a:b","c:d"]' }, async (config) => {
      assert.deepEqual((await config.settings.load(agentSettings)).fallback_models, ["a:b", "c:d"]);
    });
    const mine = defineSettings({ section: "mine", schema: z.object({ ports: z.array(z.number().int()).default([]), names: z.array(z.string()).default(["x"]) }) });
    await withConfig("", { BUB_MINE_PORTS: "80,443", BUB_MINE_NAMES: "" }, async (config) => {
      assert.deepEqual(await config.settings.load(mine), { ports: [80, 443], names: [] });
    });
    await withConfig("", { BUB_MINE_PORTS: "80,http" }, async (config) => {
      await assert.rejects(config.settings.load(mine), /BUB_MINE_PORTS=80,http \(at 1\): expected a whole number/);
    });
  });

  it("converts numbers, booleans and JSON maps, and derives each variable from the key and the section", async () => {
    assert.equal(envVariable(agentSettings, "max_steps"), "BUB_MAX_STEPS");
    assert.equal(envVariable(spillSettings, "threshold"), "BUB_SPILL_THRESHOLD");
    await withConfig("", { BUB_MAX_STEPS: " 7 ", BUB_STREAM_OUTPUT: "on", BUB_CLIENT_ARGS: '{"headers":{"x":"1"}}', BUB_SPILL_THRESHOLD: "0" }, async (config) => {
      const agent = await config.settings.load(agentSettings);
      assert.equal(agent.max_steps, 7);
      assert.deepEqual(agent.client_args, { headers: { x: "1" } });
      assert.equal((await config.settings.load(channelSettings)).stream_output, true);
      assert.equal((await config.settings.load(spillSettings)).threshold, 0);
    });
  });

  it("takes the environment over the file over the defaults, key by key", async () => {
    const yamlText = "max_tokens: 100\nmax_steps: 5\nspill:\n  threshold: 10\n";
    await withConfig(yamlText, { BUB_MAX_TOKENS: "200" }, async (config) => {
      const agent = await config.settings.load(agentSettings);
      assert.equal(agent.max_tokens, 200, "env over file");
      assert.equal(agent.max_steps, 5, "file over default");
      assert.equal(agent.verbose, 0, "default");
      assert.equal((await config.settings.load(spillSettings)).threshold, 10);
    });
  });
});
