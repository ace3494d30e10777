import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { BubFramework } from "../../src/builtin/framework.ts";
import { ConfigError, Settings, defineSettings, emptyConfigFile, envVariable, loadDotEnv, mergeConfig, type SettingsSection } from "../../src/config/settings.ts";
import { agentSettings, channelSettings, spillSettings, type AgentSettings, type ChannelSettings } from "../../src/builtin/settings.ts";
import { tempDir } from "../support/temp.ts";

// Compile-time checks: the resolved type is inferred from the zod schema, lazily loaded or not.
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
const strictSection = defineSettings({ section: "s", schema: z.strictObject({ a: z.number().default(1), b: z.array(z.string()).nullable().default(null) }) });
const lazySection = defineSettings({ section: "l", schema: async () => z.looseObject({ c: z.enum(["x", "y"]).default("x") }) });
const typeChecks: [
  Equal<ReturnType<typeof settingsOf<typeof strictSection>>, { a: number; b: string[] | null }>,
  Equal<ReturnType<typeof settingsOf<typeof lazySection>>["c"], "x" | "y">,
  Equal<AgentSettings["fallback_models"], string[] | null>,
  Equal<AgentSettings["client_args"], Record<string, unknown>>,
  Equal<ChannelSettings["admission"], "concurrent" | "follow_up" | "steer">,
] = [true, true, true, true, true];
void typeChecks;
function settingsOf<S>(section: S): S extends SettingsSection<infer T> ? T : never {
  return section as never;
}

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

  it("names the variable, its value and what is allowed for a bad env value", async () => {
    await withConfig("", { BUB_MAX_STEPS: "abc" }, async (bub) => {
      await assert.rejects(bub.settings.load(agentSettings), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.message, "invalid setting BUB_MAX_STEPS=abc: expected a whole number greater than 0 — fix it, or remove it to use the default");
        assert.deepEqual(error.details, { issues: ["BUB_MAX_STEPS=abc: expected a whole number greater than 0"] });
        return true;
      });
    });
  });

  it("names the key, the value, the file and line for a bad YAML value", async () => {
    await withConfig("model: a:b\nmax_steps: -3\n", {}, async (bub) => {
      await assert.rejects(bub.settings.load(agentSettings), (error: Error) => {
        assert.equal(error.message, `invalid setting max_steps: -3 (${bub.configFile} line 2): expected a whole number greater than 0 — fix it, or remove it to use the default`);
        return true;
      });
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
});

describe("settings problems, all at once", () => {
  const yaml = [
    "model: ''",
    "max_steps: -3",
    "max_tokens: lots",
    "admission: fast",
    "api_key: 5",
    "spill:",
    "  threshold: 1.5",
    "telegram:",
    "  api_root: not-a-url",
    "",
  ].join("\n");

  it("reports every mistake of config.yml and the environment in one error, whichever section is loaded first", async () => {
    await withConfig(yaml, { BUB_STREAM_OUTPUT: "maybe", BUB_DEBOUNCE_SECONDS: "abc" }, async (bub) => {
      const file = bub.configFile;
      await assert.rejects(bub.settings.load(spillSettings), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.details?.issues, [
          "BUB_DEBOUNCE_SECONDS=abc: expected a number of 0 or more",
          "BUB_STREAM_OUTPUT=maybe: expected true or false",
          `model: "" (${file} line 1): expected a provider:model id such as openrouter:openrouter/free`,
          `max_steps: -3 (${file} line 2): expected a whole number greater than 0`,
          `max_tokens: "lots" (${file} line 3): expected a whole number greater than 0`,
          `admission: "fast" (${file} line 4): expected one of concurrent, follow_up, steer`,
          `api_key: (hidden) (${file} line 5): expected a string or a mapping of names to strings`,
          `spill.threshold: 1.5 (${file} line 7): expected a whole number of 0 or more`,
          `telegram.api_root: "not-a-url" (${file} line 9): expected a URL such as https://api.telegram.org`,
        ]);
        const lines = error.message.split("\n");
        assert.equal(lines[0], "9 invalid settings — fix them, or remove them to use the defaults:");
        assert.equal(lines.length, 10);
        assert.ok(lines.slice(1).every((line) => line.startsWith("  - ")));
        return true;
      });
      // The same list whichever section is asked for.
      await assert.rejects(bub.settings.load(agentSettings), (error: Error) => error.message.startsWith("9 invalid settings"));
    });
  });

  it("names a missing required key with where to set it", async () => {
    const mine = defineSettings({ section: "mine", schema: z.object({ token: z.string(), level: z.number().int().default(1) }) });
    await withConfig("mine:\n  level: x\n", {}, async (bub) => {
      await assert.rejects(bub.settings.load(mine), (error: Error) => {
        assert.deepEqual((error as ConfigError).details?.issues, [
          `mine.level: "x" (${bub.configFile} line 2): expected a whole number`,
          `mine.token is missing (set BUB_MINE_TOKEN or mine.token in ${bub.configFile}): expected a string`,
        ]);
        return true;
      });
    });
  });

  it("keeps a message the schema gives, and describes nested keys by their path", async () => {
    const mine = defineSettings({
      section: "mine",
      schema: z.object({
        port: z.number().int("a port is a whole number").min(1).max(65535).default(80),
        nested: z.object({ depth: z.number().max(3) }).default({ depth: 1 }),
      }),
    });
    await withConfig("mine:\n  port: 8.5\n  nested:\n    depth: 9\n", {}, async (bub) => {
      await assert.rejects(bub.settings.load(mine), (error: Error) => {
        assert.deepEqual((error as ConfigError).details?.issues, [
          `mine.port: 8.5 (${bub.configFile} line 2): a port is a whole number`,
          `mine.nested.depth: 9 (${bub.configFile} line 3): expected a number of 3 or less`,
        ]);
        return true;
      });
    });
  });

  it("validates a whole config (onboard) and lists every problem", async () => {
    const settings = new Settings(emptyConfigFile("x"), {});
    settings.register(agentSettings);
    settings.register(channelSettings);
    await assert.rejects(settings.validate({ max_steps: 0, admission: "nope", stream_output: "yes" }, "/home/me/.bub/config.yml"), (error: Error) => {
      assert.deepEqual((error as ConfigError).details?.issues, [
        "max_steps: 0 (/home/me/.bub/config.yml): expected a whole number greater than 0",
        'stream_output: "yes" (/home/me/.bub/config.yml): expected true or false',
        'admission: "nope" (/home/me/.bub/config.yml): expected one of concurrent, follow_up, steer',
      ]);
      return true;
    });
  });

  it("asks for a zod object schema", async () => {
    const settings = new Settings(emptyConfigFile("x"), {});
    const notZod = { section: "odd", id: "odd", envPrefix: "BUB_ODD_", schema: { shape: {}, safeParse: () => ({ success: true, data: {} }) } } as never;
    await assert.rejects(settings.load(notZod), /Settings section 'odd' needs a zod object schema/);
  });
});

describe("settings from the environment", () => {
  it("reads comma-separated lists, and JSON lists too", async () => {
    await withConfig("fallback_models: [x:y]\n", { BUB_FALLBACK_MODELS: "a:b, c:d,," }, async (bub) => {
      assert.deepEqual((await bub.settings.load(agentSettings)).fallback_models, ["a:b", "c:d"]);
    });
    await withConfig("", { BUB_FALLBACK_MODELS: '["a:b","c:d"]' }, async (bub) => {
      assert.deepEqual((await bub.settings.load(agentSettings)).fallback_models, ["a:b", "c:d"]);
    });
    const mine = defineSettings({ section: "mine", schema: z.object({ ports: z.array(z.number().int()).default([]), names: z.array(z.string()).default(["x"]) }) });
    await withConfig("", { BUB_MINE_PORTS: "80,443", BUB_MINE_NAMES: "" }, async (bub) => {
      assert.deepEqual(await bub.settings.load(mine), { ports: [80, 443], names: [] });
    });
    await withConfig("", { BUB_MINE_PORTS: "80,http" }, async (bub) => {
      await assert.rejects(bub.settings.load(mine), /BUB_MINE_PORTS=80,http \(at 1\): expected a whole number/);
    });
  });

  it("converts numbers, booleans and JSON maps, and derives each variable from the key and the section", async () => {
    assert.equal(envVariable(agentSettings, "max_steps"), "BUB_MAX_STEPS");
    assert.equal(envVariable(spillSettings, "threshold"), "BUB_SPILL_THRESHOLD");
    await withConfig("", { BUB_MAX_STEPS: " 7 ", BUB_STREAM_OUTPUT: "on", BUB_CLIENT_ARGS: '{"headers":{"x":"1"}}', BUB_SPILL_THRESHOLD: "0" }, async (bub) => {
      const agent = await bub.settings.load(agentSettings);
      assert.equal(agent.max_steps, 7);
      assert.deepEqual(agent.client_args, { headers: { x: "1" } });
      assert.equal((await bub.settings.load(channelSettings)).stream_output, true);
      assert.equal((await bub.settings.load(spillSettings)).threshold, 0);
    });
  });

  it("takes the environment over the file over the defaults, key by key", async () => {
    const yamlText = "max_tokens: 100\nmax_steps: 5\nspill:\n  threshold: 10\n";
    await withConfig(yamlText, { BUB_MAX_TOKENS: "200" }, async (bub) => {
      const agent = await bub.settings.load(agentSettings);
      assert.equal(agent.max_tokens, 200, "env over file");
      assert.equal(agent.max_steps, 5, "file over default");
      assert.equal(agent.verbose, 0, "default");
      assert.equal((await bub.settings.load(spillSettings)).threshold, 10);
    });
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
