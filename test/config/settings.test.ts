import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { ConfigError, Settings, defineSettings, emptyConfigFile, type SettingsSection } from "../../src/config/settings.ts";
import { agentSettings, channelSettings, type AgentSettings, type ChannelSettings } from "../../src/builtin/settings.ts";
import { withConfig } from "./support.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";

// Compile-time checks: the resolved type is inferred from the zod schema, lazily loaded or not.
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
const strictSection = defineSettings({ section: "s", schema: z.strictObject({ a: z.number().default(1), b: z.array(z.string()).nullable().default(null) }) });
const lazySection = defineSettings({ section: "l", schema: async () => z.looseObject({ c: z.enum(["x", "y"]).default("x") }) });
const typeChecks: [
  Equal<ReturnType<typeof settingsOf<typeof strictSection>>, { a: number; b: string[] | null }>,
  Equal<ReturnType<typeof settingsOf<typeof lazySection>>["c"], "x" | "y">,
  Equal<AgentSettings["fallback_models"], string[] | null>,
  Equal<AgentSettings["client_args"], Record<string, unknown>>,
  Equal<ChannelSettings["admission"], "concurrent" | "follow_up" | "steer" | "collect" | "interrupt">,
] = [true, true, true, true, true];
void typeChecks;
function settingsOf<S>(section: S): S extends SettingsSection<infer T> ? T : never {
  return section as never;
}

describe("settings", () => {
  it("uses defaults when nothing is configured", async () => {
    await withConfig("", {}, async (config) => {
      const agent = await config.settings.load(agentSettings);
      assert.equal(agent.model, "openrouter:openrouter/free");
      assert.equal(agent.max_tokens, 16384);
      assert.equal(agent.max_steps, 100, "a default step limit (the reference has none)");
      assert.deepEqual(agent.client_args, {});
      const channels = await config.settings.load(channelSettings);
      assert.equal(channels.enabled_channels, "all");
      assert.equal(channels.admission, "concurrent");
    });
  });

  it("prefers the environment over the YAML file over defaults, parsing JSON for lists and maps", async () => {
    await withConfig("model: openai:gpt-4o\nmax_tokens: 100\nfallback_models: [a:b]\n", { BUB_MAX_TOKENS: "200", BUB_COMPLETION_ARGS: '{"temperature": 0.2}', BUB_STREAM_OUTPUT: "true" }, async (config) => {
      const agent = await config.settings.load(agentSettings);
      assert.equal(agent.model, "openai:gpt-4o");
      assert.equal(agent.max_tokens, 200);
      assert.deepEqual(agent.fallback_models, ["a:b"]);
      assert.deepEqual(agent.completion_args, { temperature: 0.2 });
      assert.equal((await config.settings.load(channelSettings)).stream_output, true);
    });
  });

  it("reads provider-scoped keys as a map that BUB_API_KEY and the file override", async () => {
    await withConfig("", { BUB_OPENROUTER_API_KEY: "or-key", BUB_OPENAI_API_BASE: "http://127.0.0.1:1/v1" }, async (config) => {
      const agent = await config.settings.load(agentSettings);
      assert.deepEqual(agent.api_key, { openrouter: "or-key" });
      assert.deepEqual(agent.api_base, { openai: "http://127.0.0.1:1/v1" });
    });
    await withConfig("", { BUB_OPENROUTER_API_KEY: "or-key", BUB_API_KEY: "global" }, async (config) => {
      assert.equal((await config.settings.load(agentSettings)).api_key, "global");
    });
  });

  it("names the variable, its value and what is allowed for a bad env value", async () => {
    await withConfig("", { BUB_MAX_STEPS: "abc" }, async (config) => {
      await assert.rejects(config.settings.load(agentSettings), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.message, "invalid setting BUB_MAX_STEPS=abc: expected a whole number greater than 0 — fix it, or remove it to use the default");
        assert.deepEqual(error.details, { issues: ["BUB_MAX_STEPS=abc: expected a whole number greater than 0"] });
        return true;
      });
    });
  });

  it("names the key, the value, the file and line for a bad YAML value", async () => {
    await withConfig("model: a:b\nmax_steps: -3\n", {}, async (config) => {
      await assert.rejects(config.settings.load(agentSettings), (error: Error) => {
        assert.equal(error.message, `invalid setting max_steps: -3 (${config.configFile} line 2): expected a whole number greater than 0 — fix it, or remove it to use the default`);
        return true;
      });
    });
  });

  it("lets a plugin register its own section with its own env prefix", async () => {
    const mine = defineSettings({ section: "mine", schema: z.object({ level: z.number().default(1), name: z.string().default("x") }) });
    await withConfig("mine:\n  level: 3\n  name: from-file\n", { BUB_MINE_NAME: "from-env" }, async (config) => {
      assert.deepEqual(await config.settings.load(mine), { level: 3, name: "from-env" });
      await config.settings.prepare();
      assert.equal(config.settings.getValue("mine.level"), 3);
      assert.equal(config.settings.getValue("model"), "openrouter:openrouter/free");
      assert.equal(config.settings.getValue("mine.missing", "dflt"), "dflt");
      assert.throws(() => config.settings.getValue("mine.missing"), /No setting named 'mine.missing'/);
      assert.throws(() => config.settings.getValue(""), /non-empty/);
    });
  });

  it("validates a config object against every section, ignoring the environment", async () => {
    const settings = new Settings(emptyConfigFile("x"), { BUB_MAX_STEPS: "nope" });
    settings.register(agentSettings as never);
    assert.deepEqual(await settings.validate({ max_steps: 3 }), { max_steps: 3 });
    await assert.rejects(settings.validate({ max_steps: "not-an-int" }), ConfigError);
  });
});

describe("importing schema modules", () => {
  it("leaves zod's global configuration alone", async () => {
    const before = JSON.stringify(z.config());
    await import("../../src/tools/tool.ts");
    await import("../../src/channels/telegram/schema.ts");
    await import("../../src/builtin/schemas.ts");
    assert.equal(JSON.stringify(z.config()), before);
    assert.notEqual(z.config().jitless, true);
  });
});
