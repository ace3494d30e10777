import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import { readConfigFile } from "../../src/config/config-file.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { collectOnboardConfig, runOnboard, splitModel } from "../../src/builtin/commands/onboard.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { kernelFramework } from "../support/framework.ts";
import { answersFromOptions, checkAnswers, modelFromAnswers } from "../../src/builtin/commands/onboard-flags.ts";
import { answeringPrompts, CANCEL } from "../support/onboard-prompts.ts";
import { tempDir } from "../support/temp.ts";

/** Prompts answering from a script keyed by question; records what was asked. */
function scripted(answers: Record<string, unknown>) {
  const asked: { message: string; options?: unknown }[] = [];
  const reply = async (options: { message: string; options?: unknown }) => {
    asked.push(options);
    const key = Object.keys(answers).find((prefix) => options.message.startsWith(prefix));
    if (key === undefined) throw new Error(`unexpected question: ${options.message}`);
    return answers[key];
  };
  const prompts = answeringPrompts(reply);
  return { prompts, asked };
}

function capture() {
  let stdout = "";
  let stderr = "";
  return { io: { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } }, out: () => stdout, err: () => stderr };
}

const channelPlugin: BubPlugin = {
  name: "tg-plugin",
  provideChannels: () => [{ name: "tg", start: async () => {}, stop: async () => {}, send: async () => {} }],
  onboardConfig: () => ({ tgplugin: { greeting: "hi" } }),
};

async function setup(existing: string, ...plugins: BubPlugin[]) {
  const dir = await tempDir();
  const home = join(dir.path, "home");
  const framework = await createBub({ workspace: dir.path, home, env: { BUB_HOME: home } });
  for (const plugin of plugins) await framework.registerPlugin(plugin);
  const { mkdir } = await import("node:fs/promises");
  await mkdir(home, { recursive: true });
  if (existing) await writeFile(framework.settings.file.path, existing);
  return { dir, framework };
}

describe("bub onboard", () => {
  it("merges the answers and plugin fragments into the existing config, which validates", async () => {
    const { dir, framework } = await setup("max_steps: 5\nmodel: anthropic:claude-x\nenabled_channels: tg\n", channelPlugin);
    try {
      const { prompts, asked } = scripted({
        "LLM provider": "custom",
        "Custom provider": "together",
        "LLM model": "meta/llama-3",
        "API key": "sk-secret",
        "API base": "http://127.0.0.1:9999/v1",
        Channels: ["tg"],
        "Stream output": true,
      });
      const { io, out } = capture();
      assert.equal(await runOnboard(framework, { prompts, io, version: "1.2.3", check: false }), 0);
      assert.match(out(), /v1\.2\.3\n\nWelcome to Bub! Let's get you set up\./);
      assert.match(out(), /Saved config to .*config\.yml/);
      const provider = asked.find((question) => question.message === "LLM provider") as unknown as { options: { value: string }[]; initialValue: string };
      assert.equal(provider.initialValue, "anthropic");
      assert.deepEqual(provider.options.slice(0, 3).map((option) => option.value), ["openrouter", "openai", "anthropic"]);
      assert.equal(provider.options.at(-1)!.value, "custom");
      const channels = asked.find((question) => question.message.startsWith("Channels")) as unknown as { options: { value: string }[]; initialValues: string[] };
      assert.equal(channels.options.some((option) => option.value === "cli"), false, "the cli channel is not offered");
      assert.deepEqual(channels.initialValues, ["tg"]);
      const written = (await readConfigFile(framework.settings.file.path)).data;
      assert.deepEqual(written, {
        max_steps: 5,
        model: "together:meta/llama-3",
        enabled_channels: "tg",
        api_key: "sk-secret",
        api_base: "http://127.0.0.1:9999/v1",
        stream_output: true,
        tgplugin: { greeting: "hi" },
      });
      await framework.settings.validate(written);
    } finally {
      await dir.cleanup();
    }
  });

  it("keeps the model name when the answer is empty and omits an empty key and base", async () => {
    const { dir, framework } = await setup("");
    try {
      const { prompts } = scripted({ "LLM provider": "openrouter", "LLM model": "", "API key": "", "API base": "", Channels: [], "Stream output": false });
      assert.equal(await runOnboard(framework, { prompts, io: capture().io, check: false }), 0);
      const written = (await readConfigFile(framework.settings.file.path)).data;
      assert.equal(written.model, "openrouter:openrouter/free");
      assert.equal("api_key" in written, false);
      assert.equal("api_base" in written, false);
      assert.equal(written.stream_output, false);
    } finally {
      await dir.cleanup();
    }
  });

  it("writes nothing when a question is cancelled (Ctrl-C)", async () => {
    const { dir, framework } = await setup("max_steps: 5\n");
    try {
      const { prompts } = scripted({ "LLM provider": "openai", "LLM model": "gpt-x", "API key": CANCEL });
      assert.equal(await runOnboard(framework, { prompts, io: capture().io, check: false }), 1);
      assert.equal(await readFile(framework.settings.file.path, "utf8"), "max_steps: 5\n");
    } finally {
      await dir.cleanup();
    }
  });

  it("fails with one readable line and writes nothing when the result does not validate", async () => {
    const broken: BubPlugin = { name: "broken", onboardConfig: () => ({ max_steps: "lots" }) };
    const { dir, framework } = await setup("max_steps: 5\n", broken);
    try {
      const { prompts } = scripted({ "LLM provider": "openai", "LLM model": "gpt-x", "API key": "", "API base": "", Channels: [], "Stream output": false });
      const { io, err } = capture();
      assert.equal(await runOnboard(framework, { prompts, io, check: false }), 1);
      assert.match(err(), /^bub: onboarding failed: .*max_steps.* — nothing was written/);
      assert.equal(await readFile(framework.settings.file.path, "utf8"), "max_steps: 5\n");
    } finally {
      await dir.cleanup();
    }
  });

  it("splits provider:model ids", () => {
    assert.deepEqual(splitModel("openai:gpt-4o"), { provider: "openai", name: "gpt-4o" });
    assert.deepEqual(splitModel("openrouter:openrouter/free"), { provider: "openrouter", name: "openrouter/free" });
    assert.deepEqual(splitModel("just-a-model"), { provider: "openrouter", name: "just-a-model" });
    assert.deepEqual(splitModel("broken:"), { provider: "openrouter", name: "broken:" });
  });
});

/** Prompts that fail the test when anything is asked. */
const silent = scripted({}).prompts;

describe("bub onboard with the answers as options", () => {
  it("writes every answer given, asks nothing and keeps the rest of the file", async () => {
    const { dir, framework } = await setup("max_steps: 5\nmodel: anthropic:claude-x\ntelegram:\n  proxy: socks5://p:1\n", channelPlugin);
    try {
      const { io, out, err } = capture();
      const answers = {
        model: "openai:gpt-4o-mini",
        apiKeyEnv: "MY_KEY",
        apiBase: "http://127.0.0.1:9/v1",
        channels: "tg",
        streamOutput: true,
        telegramTokenEnv: "TG_TOKEN",
        telegramAllowUsers: "alice,42",
        telegramAllowChats: "-100",
      };
      assert.equal(await runOnboard(framework, { prompts: silent, io, answers, interactive: false }), 0, err());
      assert.doesNotMatch(out(), /Welcome/, "no banner without questions");
      assert.match(out(), /^Saved config to .*config\.yml\n\nStart bub:\n  BUB_HOME=\S+ bub chat\nconfig\.yml reads TG_TOKEN, MY_KEY from the environment: set them first\.\n$/);
      assert.deepEqual((await readConfigFile(framework.settings.file.path)).data, {
        max_steps: 5,
        model: "openai:gpt-4o-mini",
        telegram: { proxy: "socks5://p:1", token: "${TG_TOKEN}", allow_users: "alice,42", allow_chats: "-100" },
        api_key: "${MY_KEY}",
        api_base: "http://127.0.0.1:9/v1",
        enabled_channels: "tg",
        stream_output: true,
        tgplugin: { greeting: "hi" },
      });
      assert.match(await readFile(framework.settings.file.path, "utf8"), /api_key: \$\{MY_KEY\}\n/, "a reference, not a secret");
    } finally {
      await dir.cleanup();
    }
  });

  it("changes only what is given when config.yml already names a model", async () => {
    const { dir, framework } = await setup("model: anthropic:claude-x\napi_key: old\n");
    try {
      assert.equal(await runOnboard(framework, { io: capture().io, answers: { apiKey: "sk-new" }, interactive: false }), 0);
      assert.deepEqual((await readConfigFile(framework.settings.file.path)).data, { model: "anthropic:claude-x", api_key: "sk-new" });
      assert.equal(await runOnboard(framework, { io: capture().io, answers: { model: "claude-y" }, interactive: false }), 0);
      assert.equal((await readConfigFile(framework.settings.file.path)).data.model, "anthropic:claude-y", "a bare name keeps the provider");
    } finally {
      await dir.cleanup();
    }
  });

  for (const [title, existing, answers, message] of [
    ["no model when config.yml has none", "", { apiKey: "k" }, /^bub: --model is required when config\.yml names no model yet/],
    ["--provider without --model", "model: a:b\n", { provider: "openai" }, /^bub: --provider needs --model too/],
    ["--api-key with --api-key-env", "", { model: "a:b", apiKey: "k", apiKeyEnv: "K" }, /^bub: give --api-key or --api-key-env, not both\n$/],
    ["a secret where a variable name belongs", "", { model: "a:b", apiKeyEnv: "sk-or-v1-abc" }, /^bub: --api-key-env takes the name of an environment variable \(such as MY_KEY\), not its value\n$/],
    ["--telegram-token with --telegram-token-env", "", { model: "a:b", telegramToken: "1:x", telegramTokenEnv: "T" }, /not both/],
    ["an unknown channel", "", { model: "a:b", channels: "tg,nope" }, /^bub: --channels names unknown channel 'nope' \(choose from: all, tg, telegram\)\n$/],
  ] as const) {
    it(`refuses ${title} with one line and exit 2, writing nothing`, async () => {
      const { dir, framework } = await setup(existing, channelPlugin);
      try {
        const { io, err, out } = capture();
        assert.equal(await runOnboard(framework, { io, answers, interactive: false }), 2);
        assert.match(err(), message);
        assert.equal(err().trim().split("\n").length, 1, err());
        assert.doesNotMatch(err(), /sk-or-v1-abc/, "a mistaken secret is not echoed");
        assert.equal(out(), "");
        assert.equal(await readFile(framework.settings.file.path, "utf8").catch(() => ""), existing);
      } finally {
        await dir.cleanup();
      }
    });
  }

  it("asks only the questions the options leave open", async () => {
    const { dir, framework } = await setup("", channelPlugin);
    try {
      const { prompts, asked } = scripted({ "LLM provider": "groq", Channels: ["tg"], "Stream output": false });
      const answers = { model: "llama-3", apiKeyEnv: "GROQ_KEY", apiBase: "http://h/v1" };
      assert.equal(await runOnboard(framework, { prompts, io: capture().io, answers, check: false }), 0);
      assert.deepEqual(asked.map((question) => question.message.split(" ")[0]), ["LLM", "Channels", "Stream"]);
      const written = (await readConfigFile(framework.settings.file.path)).data;
      assert.equal(written.model, "groq:llama-3");
      assert.equal(written.api_key, "${GROQ_KEY}");
      assert.equal(written.api_base, "http://h/v1");
    } finally {
      await dir.cleanup();
    }
  });

  it("reads commander's options and splits --model", () => {
    assert.deepEqual(answersFromOptions({ model: " openai:gpt-x ", apiKey: "", streamOutput: false, yes: true, telegramAllowUsers: "1" }), {
      model: "openai:gpt-x",
      streamOutput: false,
      telegramAllowUsers: "1",
    });
    assert.deepEqual(modelFromAnswers({ model: "openai:gpt-x" }), { provider: "openai", name: "gpt-x" });
    assert.deepEqual(modelFromAnswers({ model: "gpt-x" }), { name: "gpt-x" });
    assert.deepEqual(modelFromAnswers({ provider: "ollama", model: "llama3:8b" }), { provider: "ollama", name: "llama3:8b" });
    assert.deepEqual(modelFromAnswers({ provider: "ollama", model: "ollama:llama3:8b" }), { provider: "ollama", name: "llama3:8b" });
    assert.deepEqual(modelFromAnswers({ provider: "openai" }), { provider: "openai" });
    assert.throws(() => checkAnswers({ provider: "open ai" }), /not a provider id/);
    assert.doesNotThrow(() => checkAnswers({ apiKeyEnv: "MY_KEY_2", telegramTokenEnv: "_T" }));
  });
});

describe("collectOnboardConfig", () => {
  function framework(...plugins: BubPlugin[]): BubFramework {
    const bub = kernelFramework();
    plugins.forEach((plugin, index) => bub.runtime.register(plugin, plugin.name ?? `p${index}`));
    return bub;
  }

  it("collects onboard config in registration order, passing the same object and deep-merging", async () => {
    const seen: unknown[] = [];
    const bub = framework(
      { name: "first", onboardConfig: ({ currentConfig }) => (seen.push(structuredClone(currentConfig)), { model: "a:b", telegram: { token: "t" } }) },
      { name: "second", onboardConfig: ({ currentConfig }) => (seen.push(structuredClone(currentConfig)), { telegram: { allow_users: "1" } }) },
      { name: "third", onboardConfig: () => null },
    );
    assert.deepEqual(await collectOnboardConfig(bub), { model: "a:b", telegram: { token: "t", allow_users: "1" } });
    assert.deepEqual(seen, [{}, { model: "a:b", telegram: { token: "t" } }]);
    const bad = framework({ name: "bad", onboardConfig: () => "nope" as never });
    await assert.rejects(collectOnboardConfig(bad), TypeError);
  });

});
