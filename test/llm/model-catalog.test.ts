import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkModelId, listProviderModels } from "../../src/llm/model-catalog.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";

describe("provider model lists", () => {
  let listing: FakeOpenAI;
  let silent: FakeOpenAI;
  let anthropic: FakeAnthropic;
  const manyClaudes = Array.from({ length: 1500 }, (_, index) => `claude-${String(index).padStart(4, "0")}`);
  before(async () => {
    [listing, silent, anthropic] = await Promise.all([
      startFakeOpenAI({ models: ["gpt-4o-mini", "gpt-4o", "o3"] }),
      startFakeOpenAI(),
      startFakeAnthropic({ apiKey: "sk-ant", models: manyClaudes }),
    ]);
  });
  after(() => Promise.all([listing.close(), silent.close(), anthropic.close()]));

  const local = () => defaultModelSettings({ model: "local:gpt-4o", api_base: { local: listing.url, quiet: silent.url, anthropic: anthropic.url }, api_key: { anthropic: "sk-ant" } });

  it("lists an OpenAI-compatible server's models, sorted", async () => {
    assert.deepEqual(await listProviderModels("local", local(), fetch, { env: {} }), ["gpt-4o", "gpt-4o-mini", "o3"]);
  });

  it("follows Anthropic's pages with its key header", async () => {
    const models = await listProviderModels("anthropic", local(), fetch, { env: {} });
    assert.equal(models.length, 1500);
    assert.equal(models.at(-1), "claude-1499");
  });

  it("says so when a provider has no models endpoint, or refuses the key", async () => {
    await assert.rejects(listProviderModels("quiet", local(), fetch, { env: {} }), { kind: "not_found", message: /does not list its models \(GET .*\/v1\/models answered 404\)/ });
    const wrongKey = defaultModelSettings({ api_base: anthropic.url, api_key: "sk-wrong" });
    await assert.rejects(listProviderModels("anthropic", wrongKey, fetch, { env: {} }), { kind: "config", message: /refused the API key \(HTTP 401\): check BUB_ANTHROPIC_API_KEY/ });
  });

  it("checks a model id: listed, unknown with the list, not checkable, invalid, configured", async () => {
    const settings = local();
    const list = (provider: string) => listProviderModels(provider, settings, fetch, { env: {} });
    assert.deepEqual(await checkModelId("local:gpt-4o-mini", settings, list, {}), { status: "ok", id: "local:gpt-4o-mini" });
    const unknown = await checkModelId("local:gpt-4o-mnii", settings, list, {});
    assert.equal(unknown.status, "unknown_model");
    assert.deepEqual(unknown.status === "unknown_model" && unknown.available, ["gpt-4o", "gpt-4o-mini", "o3"]);
    const unlisted = await checkModelId("quiet:anything", settings, list, {});
    assert.equal(unlisted.status, "ok");
    assert.match(unlisted.status === "ok" ? (unlisted.note ?? "") : "", /quiet does not list its models/);
    const invalid = await checkModelId("nonsense", settings, list, {});
    assert.equal(invalid.status, "invalid");
    const unknownProvider = await checkModelId("nowhere:model", settings, list, {});
    assert.match(unknownProvider.status === "invalid" ? unknownProvider.message : "", /Unknown provider 'nowhere'/);
    let asked = 0;
    const configured = await checkModelId("local:gpt-4o", settings, async () => (asked++, []), {});
    assert.deepEqual([configured.status, asked], ["ok", 0], "the configured model is taken without asking");
  });
});
