// Secrets: which settings are secret, how text, JSON, log records and tape entries are
// redacted, and the environment tools get.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { collectSecrets, rememberSettingsSecrets } from "../../src/config/secrets.ts";
import { Settings } from "../../src/config/settings.ts";
import { defineSettings } from "../../src/kernel/settings-contract.ts";
import { createLogger, setLogSink } from "../../src/kernel/log.ts";
import {
  environmentSecrets,
  forgetSecrets,
  isSecretKey,
  knownSecrets,
  redactJsonText,
  redactSecrets,
  rememberSecrets,
  toolEnvironment,
} from "../../src/config/redaction.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { entries } from "../../src/tape/entry.ts";
import { renderConfigTemplates } from "../../src/skills/render.ts";
import { z } from "zod";

afterEach(() => forgetSecrets());

describe("secrets", () => {
  it("knows secret-looking keys", () => {
    for (const key of ["api_key", "token", "BUB_TELEGRAM_TOKEN", "client_secret", "password", "db_password_file"]) assert.ok(isSecretKey(key), key);
    for (const key of ["max_tokens", "model", "BUB_TOOL_ENV_PASSTHROUGH", "keyboard", "api_base"]) assert.ok(!isSecretKey(key), key);
    for (const key of ["database_url", "BUB_DATABASE_URL"]) assert.ok(isSecretKey(key), key);
  });

  it("treats a URL with a password as a secret, and its password alone too", async () => {
    const url = "postgres://bub:s3cr%40t-pass@db.internal:5432/bub";
    rememberSecrets([{ name: "BUB_DATABASE_URL", value: url }]);
    assert.equal(redactSecrets(`connect ${url} failed`), "connect [redacted:BUB_DATABASE_URL] failed");
    assert.equal(redactSecrets("password s3cr@t-pass rejected"), "password [redacted:BUB_DATABASE_URL] rejected");
    const settings = new Settings({ path: "config.yml", data: { proxy: "http://me:proxy-password-1@proxy:3128" }, lineOf: () => null }, {});
    const found = collectSecrets(settings, { BUB_DATABASE_URL: url });
    assert.ok(found.some((secret) => secret.name === "BUB_DATABASE_URL" && secret.value === url));
    assert.ok(found.some((secret) => secret.name === "proxy" && secret.value.includes("proxy-password-1")));
    assert.equal(toolEnvironment({ BUB_DATABASE_URL: url, PATH: "/bin" }, undefined).BUB_DATABASE_URL, undefined);
  });

  it("collects resolved settings (per-provider maps too), the config file and the environment", async () => {
    const file = { path: "config.yml", data: { api_key: { openai: "sk-from-file-1234" }, myplugin: { webhook_secret: "whsec-123456789" } }, lineOf: () => null };
    const settings = new Settings(file, { BUB_TELEGRAM_TOKEN: "123456:telegram-token" });
    const root = defineSettings({ section: null, schema: z.object({ api_key: z.union([z.string(), z.record(z.string(), z.string())]).nullable().default(null), model: z.string().default("openai:gpt") }) });
    const telegram = defineSettings({ section: "telegram", schema: z.object({ token: z.string().default("") }) });
    await settings.load(root);
    await settings.load(telegram);
    const found = collectSecrets(settings, { OPENAI_API_KEY: "sk-env-openai-1", SHORT_TOKEN: "x", BUB_TOOL_ENV_PASSTHROUGH: "MY_VAR" });
    const byName = Object.fromEntries(found.map((secret) => [secret.name, secret.value]));
    assert.equal(byName["api_key.openai"], "sk-from-file-1234");
    assert.equal(byName["telegram.token"], "123456:telegram-token");
    assert.equal(byName["myplugin.webhook_secret"], "whsec-123456789");
    assert.equal(byName.OPENAI_API_KEY, "sk-env-openai-1");
    assert.equal(byName.model, undefined);
    assert.equal(byName.BUB_TOOL_ENV_PASSTHROUGH, undefined);
  });

  it("redacts text and JSON text, longest secret first, and skips short values", () => {
    rememberSecrets([
      { name: "api_key", value: "sk-abcdefgh" },
      { name: "other", value: "sk-abcdefgh-longer" },
      { name: "tiny", value: "abc" },
    ]);
    assert.equal(knownSecrets().length, 2);
    assert.equal(redactSecrets("a sk-abcdefgh-longer b sk-abcdefgh abc"), "a [redacted:other] b [redacted:api_key] abc");
    rememberSecrets([{ name: "quoted", value: 'pa"ss\\word' }]);
    const json = JSON.stringify({ text: 'x pa"ss\\word y' });
    assert.deepEqual(JSON.parse(redactJsonText(json)), { text: "x [redacted:quoted] y" });
  });

  it("keeps secrets out of stored tape entries", async () => {
    rememberSecrets([{ name: "api_key", value: "sk-tape-secret-1" }]);
    const store = createMemoryTapeStore();
    await store.append("t", entries.toolResult(["OPENAI_API_KEY=sk-tape-secret-1"]));
    const [entry] = await store.fetchAll({ tape: "t" });
    assert.deepEqual(entry!.payload, { results: ["OPENAI_API_KEY=[redacted:api_key]"] });
  });

  it("keeps secrets out of log records", () => {
    rememberSecrets([{ name: "telegram.token", value: "123456:log-token" }]);
    const records: string[] = [];
    const restore = setLogSink((_level, _ns, message, error) => records.push(`${message} ${(error as Error | undefined)?.message ?? ""}`));
    try {
      createLogger("test").error("calling bot123456:log-token/getMe", new Error("failed at bot123456:log-token"));
    } finally {
      restore();
    }
    assert.deepEqual(records, ["calling bot[redacted:telegram.token]/getMe failed at bot[redacted:telegram.token]"]);
  });

  it("renders a secret ${config.x} in a skill as a marker", () => {
    rememberSecrets([{ name: "api_key", value: "sk-skill-secret" }]);
    const config = (path: string) => ({ "telegram.token": "123:abc-secret", "note": "key sk-skill-secret", "model": "m" })[path];
    assert.equal(renderConfigTemplates("t=${config.telegram.token} n=${config.note} m=${config.model}", config), "t=[redacted:telegram.token] n=key [redacted:api_key] m=m");
  });

  it("gives tools the environment without secrets, except what passes through", () => {
    rememberSecrets([{ name: "api_key", value: "sk-configured-1" }]);
    const env = { PATH: "/bin", BUB_API_KEY: "sk-configured-1", OPENAI_API_KEY: "sk-other-key-2", COPY: "sk-configured-1", BUB_TELEGRAM_TOKEN: "1:tok-abcdef", BUB_MODEL: "openai:x", MY_VAR: "sk-configured-1" };
    assert.deepEqual(toolEnvironment(env, []), { PATH: "/bin", BUB_MODEL: "openai:x" });
    assert.deepEqual(toolEnvironment(env, "MY_VAR, OPENAI_API_KEY"), { PATH: "/bin", BUB_MODEL: "openai:x", MY_VAR: "sk-configured-1", OPENAI_API_KEY: "sk-other-key-2" });
    assert.deepEqual(toolEnvironment(env, ["MY_VAR"]), { PATH: "/bin", BUB_MODEL: "openai:x", MY_VAR: "sk-configured-1" });
    assert.deepEqual(environmentSecrets(env).map((secret) => secret.name).sort(), ["BUB_API_KEY", "BUB_TELEGRAM_TOKEN", "OPENAI_API_KEY"]);
  });
});

describe("rememberSettingsSecrets", () => {
  it("walks the settings again only once they changed, and keeps secrets known after forgetSecrets", async () => {
    const env = { BUB_API_KEY: "sk-first-secret-value" };
    const settings = new Settings({ path: null, data: {} } as never, env);
    const first = rememberSettingsSecrets(settings, env);
    assert.deepEqual(first.map((secret) => secret.value), ["sk-first-secret-value"]);
    assert.equal(rememberSettingsSecrets(settings, env), first, "unchanged: the same answer");
    forgetSecrets();
    rememberSettingsSecrets(settings, env);
    assert.equal(redactSecrets("key sk-first-secret-value"), "key [redacted:BUB_API_KEY]");
    const before = settings.revision;
    const section = defineSettings({ id: "plugin-x", section: "plugin_x", schema: z.object({ webhook_secret: z.string().default("whsec-plugin-secret") }) });
    settings.register(section);
    await settings.load(section);
    assert.ok(settings.revision > before, "registering and loading a section moves the revision");
    const second = rememberSettingsSecrets(settings, env);
    assert.ok(second.some((secret) => secret.value === "whsec-plugin-secret"), "a new section's secret is found");
  });
});
