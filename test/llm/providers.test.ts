import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { BubError } from "../../src/kernel/errors.ts";
import { parseModelId } from "../../src/llm/model-id.ts";
import { createLanguageModel, providerEnvName, resolveModelTarget } from "../../src/llm/providers.ts";
import { defaultModelSettings, providerValue } from "../../src/llm/settings.ts";
import { reply, startFakeOpenAI } from "../support/fake-openai.ts";

const noEnv = {};

function configError(message: string) {
  return (error: unknown) => {
    assert.ok(BubError.isInstance(error), `expected a BubError, got ${String(error)}`);
    assert.equal(error.kind, "config");
    assert.equal(error.message, message);
    return true;
  };
}

describe("parseModelId", () => {
  it("splits at the first ':' or '/', whichever comes first", () => {
    assert.deepEqual(parseModelId("openrouter:openrouter/free"), { id: "openrouter:openrouter/free", provider: "openrouter", model: "openrouter/free" });
    assert.deepEqual(parseModelId("openai/gpt-4o:latest"), { id: "openai/gpt-4o:latest", provider: "openai", model: "gpt-4o:latest" });
    assert.deepEqual(parseModelId(" Anthropic:claude-x "), { id: "Anthropic:claude-x", provider: "anthropic", model: "claude-x" });
  });

  it("rejects ids without both parts as a config error", () => {
    for (const id of ["gpt-4o", ":model", "openai:", ""]) {
      assert.throws(() => parseModelId(id), (error: unknown) => BubError.isInstance(error) && error.kind === "config" && /expected 'provider:model'/.test(error.message));
    }
  });
});

describe("providerValue", () => {
  it("returns a string setting for every provider, or the provider's map entry", () => {
    assert.equal(providerValue("k", "openai"), "k");
    assert.equal(providerValue({ openai: "o", anthropic: "a" }, "anthropic"), "a");
    assert.equal(providerValue({ openai: "o" }, "groq"), null);
    assert.equal(providerValue(null, "openai"), null);
    assert.equal(providerValue("", "openai"), null);
  });
});

describe("resolveModelTarget", () => {
  it("serves the default model through OpenRouter with the configured key", () => {
    const target = resolveModelTarget("openrouter:openrouter/free", defaultModelSettings({ api_key: "sk-or" }), noEnv);
    assert.equal(target.family, "openrouter");
    assert.equal(target.apiKey, "sk-or");
    assert.equal(target.baseURL, null);
    assert.equal(target.ref.model, "openrouter/free");
    assert.equal(target.optionsKey, "openrouter");
  });

  it("names the variables to set when a key is missing", () => {
    assert.throws(
      () => resolveModelTarget("openrouter:openrouter/free", defaultModelSettings(), noEnv),
      configError("No API key for provider 'openrouter' — set BUB_OPENROUTER_API_KEY or BUB_API_KEY, or run `bub onboard`."),
    );
    assert.throws(
      () => resolveModelTarget("anthropic:claude-sonnet", defaultModelSettings({ api_key: { openai: "x" } }), noEnv),
      configError("No API key for provider 'anthropic' — set BUB_ANTHROPIC_API_KEY or BUB_API_KEY, or run `bub onboard`."),
    );
  });

  it("looks keys up per provider in a key map", () => {
    const settings = defaultModelSettings({ api_key: { openai: "sk-openai", anthropic: "sk-ant" } });
    assert.equal(resolveModelTarget("openai:gpt-4o", settings, noEnv).apiKey, "sk-openai");
    assert.equal(resolveModelTarget("anthropic:claude", settings, noEnv).apiKey, "sk-ant");
  });

  it("falls back to the provider SDK's own key variable", () => {
    const target = resolveModelTarget("openai:gpt-4o", defaultModelSettings(), { OPENAI_API_KEY: "from-env" });
    assert.equal(target.apiKey, "from-env");
  });

  it("serves an unknown provider through its OpenAI-compatible base URL, key optional", () => {
    const target = resolveModelTarget("local:qwen3", defaultModelSettings({ api_base: { local: "http://127.0.0.1:9/v1" } }), noEnv);
    assert.equal(target.family, "openai-compatible");
    assert.equal(target.baseURL, "http://127.0.0.1:9/v1");
    assert.equal(target.apiKey, null);
    assert.equal(target.optionsKey, "local");
    assert.equal(resolveModelTarget("my-llm:x", defaultModelSettings({ api_base: "http://h/v1" }), noEnv).optionsKey, "myLlm");
  });

  it("tells how to configure an unknown provider without a base URL", () => {
    assert.throws(
      () => resolveModelTarget("my-llm:model", defaultModelSettings({ api_base: { other: "http://x" } }), noEnv),
      (error: unknown) =>
        BubError.isInstance(error) && error.kind === "config" && error.message.startsWith("Unknown provider 'my-llm' in model 'my-llm:model': set BUB_MY_LLM_API_BASE (or BUB_API_BASE)"),
    );
  });

  it("lets a custom base URL stand in for a missing key (local servers)", () => {
    const target = resolveModelTarget("openai:llama", defaultModelSettings({ api_base: "http://127.0.0.1:9/v1" }), noEnv);
    assert.equal(target.family, "openai");
    assert.equal(target.apiKey, null);
  });

  it("knows the default endpoints of common OpenAI-compatible services", () => {
    const ollama = resolveModelTarget("ollama:llama3", defaultModelSettings(), noEnv);
    assert.equal(ollama.family, "openai-compatible");
    assert.equal(ollama.baseURL, "http://localhost:11434/v1");
    assert.throws(() => resolveModelTarget("deepseek:deepseek-chat", defaultModelSettings(), noEnv), /BUB_DEEPSEEK_API_KEY/);
    assert.equal(resolveModelTarget("groq:llama", defaultModelSettings({ api_key: "g" }), noEnv).baseURL, "https://api.groq.com/openai/v1");
  });

  it("builds provider-scoped variable names", () => {
    assert.equal(providerEnvName("openrouter", "API_KEY"), "BUB_OPENROUTER_API_KEY");
    assert.equal(providerEnvName("my-llm", "API_BASE"), "BUB_MY_LLM_API_BASE");
  });
});

describe("createLanguageModel", () => {
  const settings = defaultModelSettings({ api_key: "k" });

  it("uses chat completions for openai with a base URL, the Responses API without", async () => {
    const chat = await createLanguageModel(resolveModelTarget("openai:gpt-4o", { ...settings, api_base: "http://127.0.0.1:9/v1" }, noEnv));
    assert.equal(chat.provider, "openai.chat");
    assert.equal(chat.modelId, "gpt-4o");
    const responses = await createLanguageModel(resolveModelTarget("openai:gpt-4o", settings, noEnv));
    assert.equal(responses.provider, "openai.responses");
  });

  it("builds Anthropic, OpenRouter and OpenAI-compatible models as AI SDK v4 models", async () => {
    const anthropic = await createLanguageModel(resolveModelTarget("anthropic:claude-sonnet-4", settings, noEnv));
    assert.equal(anthropic.provider, "anthropic.messages");
    const openrouter = await createLanguageModel(resolveModelTarget("openrouter:openrouter/free", settings, noEnv));
    assert.equal(openrouter.modelId, "openrouter/free");
    const compatible = await createLanguageModel(resolveModelTarget("local:qwen3", { ...settings, api_base: { local: "http://127.0.0.1:9/v1" } }, noEnv));
    assert.equal(compatible.provider, "local.chat");
    for (const model of [anthropic, openrouter, compatible]) assert.equal(model.specificationVersion, "v4");
  });

  it("reaches a server of one's own without a key, OpenRouter included", async () => {
    const server = await startFakeOpenAI();
    try {
      for (const id of ["openrouter:openrouter/free", "openai:gpt-4o-mini", "local:any"]) {
        server.script(reply.text(`ok ${id}`));
        const model = await createLanguageModel(resolveModelTarget(id, defaultModelSettings({ api_base: server.url }), noEnv));
        const { stream } = await model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
        let text = "";
        for await (const part of stream) {
          if (part.type === "error") assert.fail(`${id}: ${String((part.error as Error).message ?? part.error)}`);
          if (part.type === "text-delta") text += part.delta;
        }
        assert.equal(text, `ok ${id}`);
      }
      assert.equal(server.requests.length, 3);
    } finally {
      await server.close();
    }
  });

  it("imports a provider package only when a model of that provider is built", async () => {
    const providers = fileURLToPath(new URL("../../src/llm/providers.ts", import.meta.url));
    const settingsModule = fileURLToPath(new URL("../../src/llm/settings.ts", import.meta.url));
    const script = `
      const { resolveModelTarget, createLanguageModel, loadedProviderFamilies } = await import(${JSON.stringify(providers)});
      const { defaultModelSettings } = await import(${JSON.stringify(settingsModule)});
      const target = resolveModelTarget("openai:gpt-4o", defaultModelSettings({ api_key: "k" }), {});
      const before = loadedProviderFamilies();
      await createLanguageModel(target);
      await createLanguageModel(target);
      console.log(JSON.stringify({ before, after: loadedProviderFamilies() }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script]);
    assert.deepEqual(JSON.parse(stdout), { before: [], after: ["openai"] });
  });
});

describe("Anthropic requests", () => {
  it("mark prompt-cache breakpoints and classify Anthropic's context-length refusal", async () => {
    const { createServer } = await import("node:http");
    const { createModelClient } = await import("../../src/llm/model-client.ts");
    const bodies: { path: string; body: Record<string, unknown> }[] = [];
    const server = createServer((request, response) => {
      let raw = "";
      request.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
      request.on("end", () => {
        bodies.push({ path: request.url ?? "", body: JSON.parse(raw) as Record<string, unknown> });
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const { port } = server.address() as { port: number };
    try {
      const client = createModelClient(defaultModelSettings({ api_key: "sk-ant", api_base: `http://127.0.0.1:${port}/v1`, max_tokens: 256 }), { env: {} });
      const stream = client.stream({
        model: "anthropic:claude-test",
        messages: [
          { role: "system", content: "You are Bub." },
          { role: "user", content: "one" },
          { role: "assistant", content: "two" },
          { role: "user", content: "three" },
        ],
      });
      await assert.rejects(
        (async () => {
          for await (const _event of stream) assert.fail("no events expected");
        })(),
        (error: unknown) => BubError.isInstance(error) && error.kind === "provider" && error.details?.context_length_exceeded === true,
      );
      assert.equal(bodies.length, 1, "a refusal is not retried");
      const { path, body } = bodies[0]!;
      assert.equal(path, "/v1/messages");
      assert.equal(body.model, "claude-test");
      assert.equal(body.max_tokens, 256);
      const ephemeral = { type: "ephemeral" };
      assert.deepEqual(body.system, [{ type: "text", text: "You are Bub.", cache_control: ephemeral }]);
      const messages = body.messages as { role: string; content: { text: string; cache_control?: unknown }[] }[];
      assert.deepEqual(
        messages.map((message) => [message.role, message.content.at(-1)!.text, message.content.at(-1)!.cache_control ?? null]),
        [
          ["user", "one", null],
          ["assistant", "two", ephemeral],
          ["user", "three", ephemeral],
        ],
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
