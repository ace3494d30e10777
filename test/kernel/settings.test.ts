import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { BubFramework } from "../../src/builtin/framework.ts";
import { ConfigError, Settings, defineSettings, emptyConfigFile, loadDotEnv, mergeConfig } from "../../src/kernel/settings.ts";
import { readConfigFile } from "../../src/kernel/config-file.ts";
import { agentSettings, channelSettings } from "../../src/builtin/settings.ts";
import { tempDir } from "../support/temp.ts";

async function withConfig(yaml: string, env: NodeJS.ProcessEnv, body: (bub: BubFramework) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  try {
    await writeFile(join(dir.path, "config.yml"), yaml);
    const bub = new BubFramework({ home: dir.path, workspace: dir.path, env });
    await bub.loadPlugins();
    await body(bub);
  } finally {
    await dir.cleanup();
  }
}

describe("settings", () => {
  it("uses defaults when nothing is configured", async () => {
    await withConfig("", {}, async (bub) => {
      const agent = await bub.settings.load(agentSettings);
      assert.equal(agent.model, "openrouter:openrouter/free");
      assert.equal(agent.max_tokens, 16384);
      assert.equal(agent.max_steps, null);
      assert.deepEqual(agent.client_args, {});
      const channels = await bub.settings.load(channelSettings);
      assert.equal(channels.enabled_channels, "all");
      assert.equal(channels.admission, "concurrent");
    });
  });

  it("prefers the environment over the YAML file over defaults, parsing JSON for lists and maps", async () => {
    await withConfig("model: openai:gpt-4o\nmax_tokens: 100\nfallback_models: [a:b]\n", { BUB_MAX_TOKENS: "200", BUB_COMPLETION_ARGS: '{"temperature": 0.2}', BUB_STREAM_OUTPUT: "true" }, async (bub) => {
      const agent = await bub.settings.load(agentSettings);
      assert.equal(agent.model, "openai:gpt-4o");
      assert.equal(agent.max_tokens, 200);
      assert.deepEqual(agent.fallback_models, ["a:b"]);
      assert.deepEqual(agent.completion_args, { temperature: 0.2 });
      assert.equal((await bub.settings.load(channelSettings)).stream_output, true);
    });
  });

  it("reads provider-scoped keys as a map that BUB_API_KEY and the file override", async () => {
    await withConfig("", { BUB_OPENROUTER_API_KEY: "or-key", BUB_OPENAI_API_BASE: "http://127.0.0.1:1/v1" }, async (bub) => {
      const agent = await bub.settings.load(agentSettings);
      assert.deepEqual(agent.api_key, { openrouter: "or-key" });
      assert.deepEqual(agent.api_base, { openai: "http://127.0.0.1:1/v1" });
    });
    await withConfig("", { BUB_OPENROUTER_API_KEY: "or-key", BUB_API_KEY: "global" }, async (bub) => {
      assert.equal((await bub.settings.load(agentSettings)).api_key, "global");
    });
  });

  it("names the key, the environment variable and what is expected for a bad env value", async () => {
    await withConfig("", { BUB_MAX_STEPS: "lots" }, async (bub) => {
      await assert.rejects(bub.settings.load(agentSettings), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /'max_steps' from environment variable BUB_MAX_STEPS: .*expected number/i);
        assert.match(error.message, /got "lots"/);
        return true;
      });
    });
  });

  it("names the file and line for a bad YAML value", async () => {
    await withConfig("model: a:b\nmax_steps: -3\n", {}, async (bub) => {
      await assert.rejects(bub.settings.load(agentSettings), /'max_steps' from .*config\.yml line 2: expected a whole number greater than 0/);
    });
  });

  it("lets a plugin register its own section with its own env prefix", async () => {
    const mine = defineSettings({ section: "mine", schema: z.object({ level: z.number().default(1), name: z.string().default("x") }) });
    await withConfig("mine:\n  level: 3\n  name: from-file\n", { BUB_MINE_NAME: "from-env" }, async (bub) => {
      assert.deepEqual(await bub.settings.load(mine), { level: 3, name: "from-env" });
      await bub.settings.prepare();
      assert.equal(bub.settings.getValue("mine.level"), 3);
      assert.equal(bub.settings.getValue("model"), "openrouter:openrouter/free");
      assert.equal(bub.settings.getValue("mine.missing", "dflt"), "dflt");
      assert.throws(() => bub.settings.getValue("mine.missing"), /No setting named 'mine.missing'/);
      assert.throws(() => bub.settings.getValue(""), /non-empty/);
    });
  });

  it("validates a config object against every section, ignoring the environment", async () => {
    const settings = new Settings(emptyConfigFile("x"), { BUB_MAX_STEPS: "nope" });
    settings.register(agentSettings as never);
    assert.deepEqual(await settings.validate({ max_steps: 3 }), { max_steps: 3 });
    await assert.rejects(settings.validate({ max_steps: "not-an-int" }), ConfigError);
  });

  it("deep-merges in place with incoming values winning", () => {
    const base: Record<string, unknown> = { a: 1, nested: { x: 1, y: 1 } };
    const incoming = { nested: { y: 2, z: { deep: true } }, b: [1] };
    mergeConfig(base, incoming, null);
    assert.deepEqual(base, { a: 1, nested: { x: 1, y: 2, z: { deep: true } }, b: [1] });
    (incoming.nested.z as { deep: boolean }).deep = false;
    assert.equal(((base.nested as Record<string, unknown>).z as { deep: boolean }).deep, true);
  });

  it("loads .env without overriding the real environment", async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, ".env"), "BUB_MODEL=from-dotenv\nBUB_MAX_TOKENS=5\n");
      const env: NodeJS.ProcessEnv = { BUB_MODEL: "real" };
      loadDotEnv(join(dir.path, ".env"), env);
      assert.deepEqual(env, { BUB_MODEL: "real", BUB_MAX_TOKENS: "5" });
      loadDotEnv(join(dir.path, "missing.env"), env);
    } finally {
      await dir.cleanup();
    }
  });

  it("rejects a config file whose top level is not a mapping", async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, "config.yml"), "- a\n- b\n");
      await assert.rejects(readConfigFile(join(dir.path, "config.yml")), /must be a YAML mapping/);
    } finally {
      await dir.cleanup();
    }
  });
});
