import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { accountIdOf, parseTimestamp, readAuthFile, removeTokens, saveTokens, storedTokens } from "../../src/llm/codex/auth-file.ts";
import { codexBaseUrl, codexRequestBody, resolveCodexTarget } from "../../src/llm/codex/model.ts";
import { authorizeUrl, createPkce, exchangeCode, randomState } from "../../src/llm/codex/oauth.ts";
import { withCodexDefaults, type CodexSettings } from "../../src/llm/codex/settings.ts";
import { resolveCodexToken } from "../../src/llm/codex/token.ts";
import { createModelClient } from "../../src/llm/model-client.ts";
import type { ModelCallEvent } from "../../src/llm/model-call.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";
import { chatgptToken, startFakeCodexAuth, type FakeCodexAuth } from "../support/fake-codex-auth.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import type { ResponsesBody } from "../support/fake-openai-responses.ts";
import { captureLogs, tempDir } from "../support/temp.ts";

const ACCOUNT = "acct-fake-123";

describe("codex auth file", () => {
  it("reads the account id from the token's claim, and expiries as numbers or RFC 3339", () => {
    assert.equal(accountIdOf(chatgptToken("acct-9", 1)), "acct-9");
    assert.equal(accountIdOf("sk-not-a-jwt"), null);
    assert.equal(parseTimestamp(1_700_000_000), 1_700_000_000_000);
    assert.equal(parseTimestamp("2026-01-02T03:04:05Z"), Date.parse("2026-01-02T03:04:05Z"));
    assert.equal(parseTimestamp("soon"), null);
  });

  it("falls back to last_refresh + 1 h, then now + 1 h, when no expiry is known", () => {
    const data = { tokens: { access_token: "opaque", refresh_token: "r" }, last_refresh: "2026-01-01T00:00:00Z" };
    assert.equal(storedTokens(data)!.expiresAt, Date.parse("2026-01-01T01:00:00Z"));
    assert.equal(storedTokens({ tokens: { access_token: "opaque" } }, 1000)!.expiresAt, 1000 + 3600_000);
    assert.equal(storedTokens({}), null);
  });

  it("saves owner-only, keeps the file's other keys, and logout removes only the sign-in", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "codex", "auth.json");
      await writeFile(join(dir.path, "x"), "");
      await saveTokens(file, { accessToken: "a1", refreshToken: "r1", expiresAt: Date.parse("2030-01-01T00:00:00Z"), accountId: "acct" }, Date.parse("2029-12-31T23:00:00Z"));
      const data = JSON.parse(await readFile(file, "utf8"));
      data.OPENAI_API_KEY = null;
      await writeFile(file, JSON.stringify(data));
      await saveTokens(file, { accessToken: "a2", refreshToken: "r2", expiresAt: Date.parse("2030-01-02T00:00:00Z"), accountId: null });
      const saved = JSON.parse(await readFile(file, "utf8"));
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      assert.equal(saved.OPENAI_API_KEY, null);
      assert.deepEqual(saved.tokens, { access_token: "a2", refresh_token: "r2", expires_at: "2030-01-02T00:00:00Z", account_id: "acct" });
      assert.match(saved.last_refresh, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(await removeTokens(file), true);
      assert.deepEqual(await readAuthFile(file), { OPENAI_API_KEY: null });
      assert.equal(await removeTokens(file), false);
    } finally {
      await dir.cleanup();
    }
  });
});

describe("codex OAuth and token refresh (fake OAuth server)", () => {
  let auth: FakeCodexAuth;
  let settings: CodexSettings;
  before(async () => {
    auth = await startFakeCodexAuth({ accountId: ACCOUNT });
    settings = withCodexDefaults({ authorize_url: auth.authorizeUrl, token_url: auth.tokenUrl, redirect_uri: "http://localhost:1/auth/callback" });
  });
  after(() => auth.close());
  beforeEach(() => {
    auth.ttlSeconds = 3600;
    auth.failToken = null;
  });

  it("builds the authorize URL with PKCE S256, the state and the Codex parameters, and trades the code", async () => {
    const pkce = createPkce();
    const state = randomState();
    const url = new URL(authorizeUrl(settings, pkce, state));
    assert.equal(url.searchParams.get("scope"), "openid profile email offline_access");
    assert.equal(url.searchParams.get("originator"), "codex_cli_rs");
    assert.equal(url.searchParams.get("codex_cli_simplified_flow"), "true");
    assert.equal(url.searchParams.get("id_token_add_organizations"), "true");
    const redirect = await fetch(url, { redirect: "manual" });
    assert.equal(redirect.status, 302);
    const back = new URL(redirect.headers.get("location")!);
    assert.equal(back.searchParams.get("state"), state);
    await assert.rejects(exchangeCode(settings, back.searchParams.get("code")!, createPkce().verifier), /HTTP 400: code_verifier does not match/);
    const again = new URL((await fetch(url, { redirect: "manual" })).headers.get("location")!);
    const tokens = await exchangeCode(settings, again.searchParams.get("code")!, pkce.verifier);
    assert.equal(tokens.accountId, ACCOUNT);
    assert.ok(tokens.refreshToken.startsWith("rt-"));
  });

  it("refreshes a token about to expire, saves it, and keeps an unexpired one when refreshing fails", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "auth.json");
      const old = chatgptToken(ACCOUNT, Math.floor(Date.now() / 1000) + 60);
      auth.acceptRefreshToken("rt-old");
      await saveTokens(file, { accessToken: old, refreshToken: "rt-old", expiresAt: Date.now() + 60_000, accountId: ACCOUNT });
      auth.failToken = 503;
      const { result: kept, logs } = await captureLogs(() => resolveCodexToken({ authFile: file, settings }));
      assert.equal(kept!.accessToken, old, "the old token still works for a minute");
      assert.match(logs.map((log) => log.message).join("\n"), /refresh failed: .*HTTP 503/);
      assert.ok(!logs.some((log) => log.message.includes(old) || log.message.includes("rt-old")), "no token in the logs");
      auth.failToken = null;
      const fresh = await resolveCodexToken({ authFile: file, settings });
      assert.equal(fresh!.accessToken, auth.issued.at(-1));
      assert.equal(storedTokens(await readAuthFile(file))!.accessToken, fresh!.accessToken);
      assert.equal((await resolveCodexToken({ authFile: file, settings }))!.accessToken, fresh!.accessToken, "a fresh token is not refreshed again");
      await saveTokens(file, { accessToken: old, refreshToken: "rt-unknown", expiresAt: Date.now() - 1000, accountId: ACCOUNT });
      assert.equal((await captureLogs(() => resolveCodexToken({ authFile: file, settings }))).result, null, "expired and not refreshable");
    } finally {
      await dir.cleanup();
    }
  });
});

describe("the codex provider", () => {
  it("normalizes the base URL and shapes the request body with the Codex defaults", () => {
    assert.equal(codexBaseUrl("https://chatgpt.com/backend-api"), "https://chatgpt.com/backend-api/codex");
    assert.equal(codexBaseUrl("https://x.test/backend-api/codex/responses/"), "https://x.test/backend-api/codex");
    const body = JSON.parse(codexRequestBody(JSON.stringify({ model: "m", input: [], max_output_tokens: 10, temperature: 0.2, stream: true, text: { format: { type: "text" } } })));
    assert.deepEqual(body, { model: "m", input: [], stream: true, text: { format: { type: "text" }, verbosity: "medium" }, store: false, instructions: "You are Codex.", include: ["reasoning.encrypted_content"] });
    const explicit = JSON.parse(codexRequestBody(JSON.stringify({ model: "m", store: true, instructions: "Be brief.", include: [] })));
    assert.equal(explicit.store, true);
    assert.equal(explicit.instructions, "Be brief.");
    assert.deepEqual(explicit.include, []);
  });

  it("serves openai: only without an API base, and with no key and a stored sign-in or a ChatGPT key", async () => {
    const dir = await tempDir();
    try {
      const env = { CODEX_HOME: dir.path };
      const settings = defaultModelSettings();
      assert.equal(await resolveCodexTarget("openai:gpt-5", settings, env), null, "nobody signed in");
      await saveTokens(join(dir.path, "auth.json"), { accessToken: chatgptToken(ACCOUNT, 2e9), refreshToken: "r", expiresAt: 2e12, accountId: ACCOUNT });
      assert.equal((await resolveCodexTarget("openai:gpt-5", settings, env))?.codex.credentials.kind, "oauth");
      assert.equal(await resolveCodexTarget("anthropic:claude", settings, env), null);
      assert.equal(await resolveCodexTarget("openai:gpt-5", defaultModelSettings({ api_base: "http://127.0.0.1:1/v1" }), env), null);
      assert.equal(await resolveCodexTarget("openai:gpt-5", defaultModelSettings({ api_key: "sk-plain" }), env), null);
      const keyed = await resolveCodexTarget("openai:gpt-5", defaultModelSettings({ api_key: chatgptToken("acct-key", 2e9) }), {});
      assert.deepEqual(keyed?.codex.credentials.kind === "key" && keyed.codex.credentials.accountId, "acct-key");
    } finally {
      await dir.cleanup();
    }
  });

  it("streams text and a tool call from the Codex endpoint with the bearer token and the Codex headers", async () => {
    const dir = await tempDir();
    const server: FakeOpenAI = await startFakeOpenAI();
    try {
      const token = chatgptToken(ACCOUNT, Math.floor(Date.now() / 1000) + 3600);
      await saveTokens(join(dir.path, "auth.json"), { accessToken: token, refreshToken: "r", expiresAt: Date.now() + 3600_000, accountId: ACCOUNT });
      server.script(reply.toolCalls([{ id: "call_1", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { text: "Let me look." }));
      const settings = defaultModelSettings({ model: "openai:gpt-5.1-codex", codex: { base_url: server.url }, completion_args: { temperature: 0.3 } });
      const client = createModelClient(settings, { env: { CODEX_HOME: dir.path } });
      const events: ModelCallEvent[] = [];
      for await (const event of client.stream({ model: settings.model, messages: [{ role: "system", content: "sys" }, { role: "user", content: "hi" }], tools: [{ name: "fs_read", description: "read", parameters: { type: "object", properties: { path: { type: "string" } } } }] })) events.push(event);
      await client.close();
      const text = events.filter((event) => event.type === "text").map((event) => (event as { delta: string }).delta).join("");
      assert.equal(text, "Let me look.");
      const call = events.find((event) => event.type === "tool_call") as Extract<ModelCallEvent, { type: "tool_call" }>;
      assert.deepEqual(call.call.function, { name: "fs_read", arguments: '{"path":"notes.txt"}' });
      const request = server.requests[0]!;
      assert.equal(request.path, "/v1/codex/responses");
      assert.equal(request.headers.authorization, `Bearer ${token}`);
      assert.equal(request.headers["chatgpt-account-id"], ACCOUNT);
      assert.equal(request.headers["openai-beta"], "responses=experimental");
      assert.equal(request.headers.originator, "bub");
      const body = request.body as unknown as ResponsesBody;
      assert.equal(body.store, false);
      assert.equal(body.instructions, "You are Codex.");
      assert.equal(body.stream, true);
      assert.equal(body.max_output_tokens, undefined);
      assert.equal(body.temperature, undefined);
      assert.deepEqual(body.include, ["reasoning.encrypted_content"]);
    } finally {
      await server.close();
      await dir.cleanup();
    }
  });

  it("raises a Codex response that ends incomplete, as the reference does", async () => {
    const dir = await tempDir();
    const server: FakeOpenAI = await startFakeOpenAI();
    try {
      await saveTokens(join(dir.path, "auth.json"), { accessToken: chatgptToken(ACCOUNT, 2e9), refreshToken: "r", expiresAt: 2e12, accountId: ACCOUNT });
      server.script(reply.text("Cut sh", { finishReason: "length" }));
      const settings = defaultModelSettings({ model: "openai:gpt-5.1-codex", codex: { base_url: server.url }, fallback_models: [] });
      const client = createModelClient(settings, { env: { CODEX_HOME: dir.path }, sleep: async () => undefined, retry: { maxAttempts: 1 } });
      await assert.rejects(
        async () => {
          for await (const _event of client.stream({ model: settings.model, messages: [{ role: "user", content: "hi" }] })) {
            // drained
          }
        },
        (error: Error) => /ended incomplete \(max_output_tokens\)/.test(error.message),
      );
      await client.close();
    } finally {
      await server.close();
      await dir.cleanup();
    }
  });

  it("streams the reasoning summary, and sends the session's reasoning effort", async () => {
    const dir = await tempDir();
    const server: FakeOpenAI = await startFakeOpenAI();
    try {
      await saveTokens(join(dir.path, "auth.json"), { accessToken: chatgptToken(ACCOUNT, 2e9), refreshToken: "r", expiresAt: 2e12, accountId: ACCOUNT });
      server.script(reply.text("Done.", { reasoning: "Thinking it over." }), reply.text("Again."));
      const settings = defaultModelSettings({ model: "openai:gpt-5.1-codex", codex: { base_url: server.url }, completion_args: { providerOptions: { openai: { reasoningSummary: "auto" } } } });
      const client = createModelClient(settings, { env: { CODEX_HOME: dir.path } });
      const events: ModelCallEvent[] = [];
      for await (const event of client.stream({ model: settings.model, messages: [{ role: "user", content: "hi" }], reasoningEffort: "high" })) events.push(event);
      for await (const _event of client.stream({ model: settings.model, messages: [{ role: "user", content: "hi" }], reasoningEffort: "auto" })) {
        // drained
      }
      await client.close();
      const reasoning = events.filter((event) => event.type === "reasoning").map((event) => (event as { delta: string }).delta).join("");
      assert.equal(reasoning, "Thinking it over.");
      assert.deepEqual((server.requests[0]!.body as unknown as ResponsesBody).reasoning, { effort: "high", summary: "auto" });
      assert.deepEqual((server.requests[1]!.body as unknown as ResponsesBody).reasoning, { summary: "auto" }, "auto sends no effort");
    } finally {
      await server.close();
      await dir.cleanup();
    }
  });
});
