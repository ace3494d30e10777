// The questions bub onboard adds around the model answers: the check against a real (fake)
// OpenAI-compatible server, the Telegram token and allowlist, the closing start commands,
// and the plain-line questions used when stdin is not a terminal.
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { createBub } from "../../src/builtin/create.ts";
import { runOnboard, startHint } from "../../src/builtin/commands/onboard.ts";
import { linePrompts } from "../../src/builtin/commands/onboard-lines.ts";
import { readConfigFile } from "../../src/config/config-file.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { answeringPrompts } from "../support/onboard-prompts.ts";
import { tempDir } from "../support/temp.ts";

/** Prompts answering in order: each question must start with the next prefix. */
function inOrder(script: [prefix: string, answer: unknown][]) {
  const asked: string[] = [];
  const logged: string[] = [];
  const reply = async (options: { message: string }) => {
    asked.push(options.message);
    const next = script.shift();
    if (!next || !options.message.startsWith(next[0])) throw new Error(`unexpected question: ${options.message} (expected ${next?.[0] ?? "none"})`);
    return next[1];
  };
  const prompts = answeringPrompts(reply, { info: (text: string) => logged.push(text), success: (text: string) => logged.push(text), error: (text: string) => logged.push(text) });
  return { prompts, asked, logged, left: () => script.length };
}

function capture() {
  let stdout = "";
  let stderr = "";
  return { io: { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } }, out: () => stdout, err: () => stderr };
}

async function setup(existing = "") {
  const dir = await tempDir();
  const home = join(dir.path, "home");
  const framework = await createBub({ workspace: dir.path, home, env: { BUB_HOME: home } });
  await mkdir(home, { recursive: true });
  if (existing) await writeFile(framework.settings.file.path, existing);
  return { dir, framework, written: async () => (await readConfigFile(framework.settings.file.path)).data };
}

describe("bub onboard: the model check (fake OpenAI server)", () => {
  const server = useFakeOpenAI();

  it("checks the answers with one short request before saving and says the model answered", async () => {
    const { dir, framework, written } = await setup();
    try {
      server.script(reply.text("ok"));
      const { prompts, logged } = inOrder([
        ["LLM provider", "openai"],
        ["LLM model", "fake-model"],
        ["API key", "sk-good"],
        ["API base", server.url],
        ["Channels", []],
        ["Stream output", false],
      ]);
      assert.equal(await runOnboard(framework, { prompts, io: capture().io }), 0);
      assert.equal(server.requests.length, 1);
      const [request] = server.requests;
      assert.equal(request!.headers.authorization, "Bearer sk-good");
      assert.equal(request!.body.model, "fake-model");
      assert.equal(request!.body.max_completion_tokens, 16, "a short answer, in the field openai uses");
      assert.ok(logged.some((line) => /openai:fake-model answered/.test(line)), logged.join("\n"));
      assert.equal((await written()).model, "openai:fake-model");
    } finally {
      await dir.cleanup();
    }
  });

  it("after a failed check says what failed, lets the person answer again, and saves what passed", async () => {
    const { dir, framework, written } = await setup();
    try {
      server.script(reply.error(401, "Incorrect API key provided"), reply.text("ok"));
      const { prompts, logged, left } = inOrder([
        ["LLM provider", "openai"],
        ["LLM model", "fake-model"],
        ["API key", "sk-bad"],
        ["API base", server.url],
        ["What now?", "edit"],
        ["LLM provider", "openai"],
        ["LLM model", ""],
        ["API key", "sk-good"],
        ["API base", ""],
        ["Channels", []],
        ["Stream output", false],
      ]);
      const { io, err } = capture();
      assert.equal(await runOnboard(framework, { prompts, io }), 0, err());
      assert.equal(left(), 0);
      assert.ok(logged.some((line) => /The check of openai:fake-model failed: .*401/.test(line)), logged.join("\n"));
      assert.deepEqual(server.requests.map((request) => request.headers.authorization), ["Bearer sk-bad", "Bearer sk-good"]);
      const config = await written();
      assert.equal(config.api_key, "sk-good");
      assert.equal(config.model, "openai:fake-model", "an empty model answer keeps the one given before");
      assert.equal(config.api_base, server.url, "an empty base answer keeps the one given before");
    } finally {
      await dir.cleanup();
    }
  });

  it("saves anyway when asked to, and checks again on retry", async () => {
    const { dir, framework, written } = await setup();
    try {
      server.script(reply.error(404, "The model does not exist"), reply.error(404, "The model does not exist"));
      const { prompts } = inOrder([
        ["LLM provider", "openai"],
        ["LLM model", "missing-model"],
        ["API key", "sk-x"],
        ["API base", server.url],
        ["What now?", "retry"],
        ["What now?", "save"],
        ["Channels", []],
        ["Stream output", false],
      ]);
      assert.equal(await runOnboard(framework, { prompts, io: capture().io }), 0);
      assert.equal(server.requests.length, 2);
      assert.equal((await written()).model, "openai:missing-model");
    } finally {
      await dir.cleanup();
    }
  });

  it("without questions, --check refuses to save a model that fails, in one line with exit 1", async () => {
    const { dir, framework } = await setup("max_steps: 5\n");
    try {
      server.script(reply.error(401, "Incorrect API key provided"));
      const { io, err, out } = capture();
      const answers = { model: "openai:fake-model", apiKey: "sk-bad", apiBase: server.url };
      assert.equal(await runOnboard(framework, { io, answers, interactive: false, check: true }), 1);
      assert.match(err(), /^bub: the check of openai:fake-model failed: .*401.* — nothing was written; fix the options, or pass --no-check to save anyway\n$/);
      assert.equal(out(), "");
      assert.equal(await readFile(framework.settings.file.path, "utf8"), "max_steps: 5\n");
    } finally {
      await dir.cleanup();
    }
  });
});

describe("bub onboard: Telegram", () => {
  it("asks for the bot token and who may use it when Telegram is chosen, and ends with bub gateway", async () => {
    const { dir, framework, written } = await setup();
    try {
      const { prompts, logged } = inOrder([
        ["LLM provider", "ollama"],
        ["LLM model", "llama3"],
        ["API key", ""],
        ["API base", ""],
        ["Channels", ["telegram"]],
        ["Telegram bot token", "${TG_TOKEN}"],
        ["Telegram users", ""],
        ["Telegram chats", ""],
        ["Telegram users", "alice, 42"],
        ["Telegram chats", ""],
        ["Stream output", true],
      ]);
      const { io, out } = capture();
      assert.equal(await runOnboard(framework, { prompts, io, check: false }), 0);
      assert.ok(logged.some((line) => /serves nobody/.test(line)), "an empty allowlist is asked again");
      const config = await written();
      assert.deepEqual(config.telegram, { token: "${TG_TOKEN}", allow_users: "alice, 42", allow_chats: "" });
      assert.equal(config.enabled_channels, "telegram");
      assert.match(out(), /\n  BUB_HOME=\S+ bub chat +# chat in this terminal\n  BUB_HOME=\S+ bub gateway +# serve the Telegram bot\nconfig\.yml reads TG_TOKEN from the environment: set it first\.\n$/);
    } finally {
      await dir.cleanup();
    }
  });

  it("leaves Telegram off without a token, and keeps an existing token on an empty answer", async () => {
    const off = await setup();
    try {
      const { prompts } = inOrder([["LLM provider", "ollama"], ["LLM model", "llama3"], ["API key", ""], ["API base", ""], ["Channels", ["telegram"]], ["Telegram bot token", ""], ["Stream output", false]]);
      const { io, out } = capture();
      assert.equal(await runOnboard(off.framework, { prompts, io, check: false }), 0);
      assert.equal((await off.written()).telegram, undefined);
      assert.doesNotMatch(out(), /bub gateway/);
    } finally {
      await off.dir.cleanup();
    }
    const kept = await setup("telegram:\n  token: 1:abc\n  allow_chats: '-100'\n");
    try {
      const { prompts } = inOrder([["LLM provider", "ollama"], ["LLM model", "llama3"], ["API key", ""], ["API base", ""], ["Channels", ["telegram"]], ["Telegram bot token", ""], ["Telegram users", ""], ["Telegram chats", "-100"], ["Stream output", false]]);
      assert.equal(await runOnboard(kept.framework, { prompts, io: capture().io, check: false }), 0);
      assert.deepEqual((await kept.written()).telegram, { token: "1:abc", allow_users: "", allow_chats: "-100" });
    } finally {
      await kept.dir.cleanup();
    }
  });

  it("does not ask what the Telegram options answered, nor anything when Telegram is not chosen", async () => {
    const { dir, framework } = await setup();
    try {
      const given = inOrder([["LLM provider", "ollama"], ["LLM model", "llama3"], ["API key", ""], ["API base", ""], ["Channels", ["telegram"]], ["Telegram chats", ""], ["Stream output", false]]);
      const answers = { telegramTokenEnv: "TG", telegramAllowUsers: "7" };
      assert.equal(await runOnboard(framework, { prompts: given.prompts, io: capture().io, answers, check: false }), 0);
      assert.equal(given.left(), 0);
      const none = inOrder([["LLM provider", "ollama"], ["LLM model", "llama3"], ["API key", ""], ["API base", ""], ["Channels", []], ["Stream output", false]]);
      assert.equal(await runOnboard(framework, { prompts: none.prompts, io: capture().io, check: false }), 0);
      assert.equal(none.left(), 0);
    } finally {
      await dir.cleanup();
    }
  });
});

describe("startHint", () => {
  it("names bub chat, bub gateway only with a Telegram token, BUB_HOME when set, and unset variables", () => {
    assert.equal(startHint({ model: "a:b" }, {}, ["telegram"]), "\nStart bub:\n  bub chat\n");
    assert.equal(
      startHint({ telegram: { token: "${T}" }, api_key: "$${LITERAL}" }, { BUB_HOME: "/my home" }, ["telegram"]),
      "\nStart bub:\n  BUB_HOME='/my home' bub chat       # chat in this terminal\n  BUB_HOME='/my home' bub gateway    # serve the Telegram bot\nconfig.yml reads T from the environment: set it first.\n",
    );
    assert.doesNotMatch(startHint({ telegram: { token: "1:x" }, enabled_channels: "other" }, {}, ["telegram"]), /gateway/);
    assert.match(startHint({}, { BUB_TELEGRAM_TOKEN: "1:x" }, ["telegram"]), /bub gateway/);
  });
});

describe("line prompts (stdin that is not a terminal)", () => {
  it("answers each question with the next line: defaults, numbers, names, lists and yes/no", async () => {
    const input = new PassThrough();
    let shown = "";
    const prompts = linePrompts(input, { write: (text: string) => (shown += text) });
    input.end("\n2\nnope\nopenai\n\nhidden-key\ntg, telegram\nmaybe\ny\n");
    const options = [{ value: "openrouter" }, { value: "openai" }];
    assert.equal(await prompts.select({ message: "Provider", options, initialValue: "openrouter" }), "openrouter");
    assert.equal(await prompts.select({ message: "Provider", options }), "openai");
    assert.equal(await prompts.select({ message: "Provider", options }), "openai", "an unknown name is asked again");
    assert.equal(await prompts.text({ message: "Model", defaultValue: "gpt-x" }), "gpt-x");
    assert.equal(await prompts.password({ message: "Key" }), "hidden-key");
    assert.deepEqual(await prompts.multiselect({ message: "Channels", options: [{ value: "tg" }, { value: "telegram" }] }), ["tg", "telegram"]);
    assert.equal(await prompts.confirm({ message: "Stream", initialValue: false }), true);
    assert.ok(prompts.isCancel(await prompts.text({ message: "More" })), "the end of input cancels");
    prompts.close();
    assert.match(shown, /Provider \(openrouter, openai\) \[openrouter\]: openrouter\n/);
    assert.match(shown, /nope\n  choose one of: openrouter, openai\n/);
    assert.match(shown, /Key: \*{8}\n/);
    assert.doesNotMatch(shown, /hidden-key/, "a key is not echoed");
    assert.match(shown, /maybe\n  answer y or n\n/);
  });
});
