import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { ConfigError, Settings, defineSettings, emptyConfigFile } from "../../src/config/settings.ts";
import { agentSettings, channelSettings, spillSettings } from "../../src/builtin/settings.ts";
import { withConfig } from "./support.ts";

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
    await withConfig(yaml, { BUB_STREAM_OUTPUT: "maybe", BUB_DEBOUNCE_SECONDS: "abc" }, async (config) => {
      const file = config.configFile;
      await assert.rejects(config.settings.load(spillSettings), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.details?.issues, [
          "BUB_DEBOUNCE_SECONDS=abc: expected a number of seconds from 0 to 2147483 (the longest wait Node's timers allow, about 24.8 days)",
          "BUB_STREAM_OUTPUT=maybe: expected true or false",
          `model: "" (${file} line 1): expected a provider:model id such as openrouter:openrouter/free`,
          `max_steps: -3 (${file} line 2): expected a whole number greater than 0`,
          `max_tokens: "lots" (${file} line 3): expected a whole number greater than 0`,
          `admission: "fast" (${file} line 4): expected one of concurrent, follow_up, steer, collect, interrupt`,
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
      await assert.rejects(config.settings.load(agentSettings), (error: Error) => error.message.startsWith("9 invalid settings"));
    });
  });

  it("names a missing required key with where to set it", async () => {
    const mine = defineSettings({ section: "mine", schema: z.object({ token: z.string(), level: z.number().int().default(1) }) });
    await withConfig("mine:\n  level: x\n", {}, async (config) => {
      await assert.rejects(config.settings.load(mine), (error: Error) => {
        assert.deepEqual((error as ConfigError).details?.issues, [
          `mine.level: "x" (${config.configFile} line 2): expected a whole number`,
          `mine.token is missing (set BUB_MINE_TOKEN or mine.token in ${config.configFile}): expected a string`,
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
    await withConfig("mine:\n  port: 8.5\n  nested:\n    depth: 9\n", {}, async (config) => {
      await assert.rejects(config.settings.load(mine), (error: Error) => {
        assert.deepEqual((error as ConfigError).details?.issues, [
          `mine.port: 8.5 (${config.configFile} line 2): a port is a whole number`,
          `mine.nested.depth: 9 (${config.configFile} line 3): expected a number of 3 or less`,
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
        'admission: "nope" (/home/me/.bub/config.yml): expected one of concurrent, follow_up, steer, collect, interrupt',
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
