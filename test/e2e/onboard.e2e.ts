import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { startFakeTelegram } from "../support/fake-telegram.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { startBub, within } from "./support/live.ts";

describe("bub onboard without questions, then a turn with only that config", () => {
  let home: Awaited<ReturnType<typeof tempHome>>;
  let server: FakeOpenAI;
  before(async () => {
    await installedPackage();
    home = await tempHome();
    server = await startFakeOpenAI();
  });
  after(async () => {
    await server.close();
    await home.cleanup();
  });

  it("writes config.yml from the options; bub run answers from the configured model with the key from MY_KEY", async () => {
    const bubHome = join(home.path, "bub");
    const onboard = await runBub(["onboard", "--model", "openai:fake-model", "--api-base", server.url, "--api-key-env", "MY_KEY", "--yes"], {
      home: home.path,
      env: { BUB_HOME: bubHome },
    });
    assert.equal(onboard.code, 0, onboard.stderr);
    assert.equal(onboard.stdout, `Saved config to ${join(bubHome, "config.yml")}\n\nStart bub:\n  BUB_HOME=${bubHome} bub chat\nconfig.yml reads MY_KEY from the environment: set it first.\n`);
    const config = await readFile(join(bubHome, "config.yml"), "utf8");
    assert.match(config, /^model: openai:fake-model$/m);
    assert.match(config, /^api_key: \$\{MY_KEY\}$/m);
    assert.ok(config.includes(`api_base: ${server.url}`), config);

    server.script(reply.text("Hello from the fake model"));
    const run = await runBub(["run", "hello"], { home: home.path, env: { BUB_HOME: bubHome, MY_KEY: "sk-e2e-secret" } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Hello from the fake model/);
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]!.body.model, "fake-model");
    assert.equal(server.requests[0]!.headers.authorization, "Bearer sk-e2e-secret");
  });

  it("run again with --check: says the check passed, and warns about no variable it writes", async () => {
    const bubHome = join(home.path, "again");
    const args = ["onboard", "--model", "openai:fake-model", "--api-base", server.url, "--api-key-env", "MY_KEY", "--yes"];
    assert.equal((await runBub(args, { home: home.path, env: { BUB_HOME: bubHome } })).code, 0);
    server.script(reply.text("ok"));
    const again = await runBub([...args, "--check"], { home: home.path, env: { BUB_HOME: bubHome, MY_KEY: "sk-e2e-secret" } });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr, "");
    assert.match(again.stdout, /^Checked openai:fake-model: it answered\.\nSaved config to /);
    const unset = await runBub(args, { home: home.path, env: { BUB_HOME: bubHome } });
    assert.equal(unset.code, 0, unset.stderr);
    assert.equal(unset.stderr, "", "no warning about ${MY_KEY} while it is being written; the hint on stdout says to set it");
    assert.match(unset.stdout, /config\.yml reads MY_KEY from the environment: set it first\./);
  });

  it("with options on a stdin that is not a terminal it asks nothing, even without --yes", async () => {
    const bubHome = join(home.path, "piped");
    const result = await runBub(["onboard", "--model", "ollama:llama3", "--no-stream-output"], { home: home.path, env: { BUB_HOME: bubHome } });
    assert.equal(result.code, 0, result.stderr);
    const config = await readFile(join(bubHome, "config.yml"), "utf8");
    assert.match(config, /^model: ollama:llama3$/m);
    assert.match(config, /^stream_output: false$/m);
  });

  it("refuses a missing model in one line on stderr with exit 2 and writes nothing", async () => {
    const bubHome = join(home.path, "missing");
    const result = await runBub(["onboard", "--api-key-env", "MY_KEY", "--yes"], { home: home.path, env: { BUB_HOME: bubHome } });
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.match(result.stderr, /^bub: --model is required/);
    await assert.rejects(readFile(join(bubHome, "config.yml")), { code: "ENOENT" });
  });
});

describe("bub onboard answered line by line on stdin, then bub gateway with only that config", () => {
  const TOKEN = "123456:ONBOARD-E2E";
  const ALICE = 7;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let server: FakeOpenAI;
  before(async () => {
    await installedPackage();
    home = await tempHome();
    server = await startFakeOpenAI();
  });
  after(async () => {
    await server.close();
    await home.cleanup();
  });

  it("asks for the model (checked with one request), Telegram token and allowlist; bub gateway then serves the bot", { timeout: 60_000 }, async () => {
    const bubHome = join(home.path, "wizard");
    server.script(reply.text("ok"));
    const answers = ["openai", "fake-model", "sk-e2e-key", server.url, "telegram", "${TG_TOKEN}", String(ALICE), "", "n"];
    const onboard = await runBub(["onboard"], { home: home.path, env: { BUB_HOME: bubHome }, input: `${answers.join("\n")}\n` });
    assert.equal(onboard.code, 0, onboard.stdout + onboard.stderr);
    assert.match(onboard.stdout, /Welcome to Bub!/);
    assert.match(onboard.stdout, /openai:fake-model answered/);
    assert.doesNotMatch(onboard.stdout, /sk-e2e-key/, "the key is not echoed");
    assert.ok(
      onboard.stdout.endsWith(
        `Start bub:\n  BUB_HOME=${bubHome} bub chat       # chat in this terminal\n  BUB_HOME=${bubHome} bub gateway    # serve the Telegram bot\nconfig.yml reads TG_TOKEN from the environment: set it first.\n`,
      ),
      onboard.stdout,
    );
    assert.equal(server.requests.length, 1, "one check request");
    assert.equal(server.requests[0]!.headers.authorization, "Bearer sk-e2e-key");
    assert.equal(server.requests[0]!.body.max_completion_tokens, 16);
    const file = join(bubHome, "config.yml");
    const config = await readFile(file, "utf8");
    assert.match(config, /^model: openai:fake-model$/m);
    assert.match(config, /^enabled_channels: telegram$/m);
    assert.match(config, /^ {2}token: \$\{TG_TOKEN\}$/m);
    assert.match(config, /^ {2}allow_users: "7"$/m);
    assert.equal((await stat(file)).mode & 0o777, 0o600, "the key is in a file only its owner reads");

    const telegram = await startFakeTelegram({ token: TOKEN });
    const env = { BUB_HOME: bubHome, TG_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot, BUB_DEBOUNCE_SECONDS: "0" };
    const gateway = await startBub(["gateway"], { home: home.path, env });
    try {
      const exited = gateway.closed.then((result) => {
        throw new Error(`bub gateway exited (${result.code})\n${result.stdout}\n${result.stderr}`);
      });
      exited.catch(() => {});
      await within(Promise.race([telegram.waitForCalls("deleteWebhook", 1), exited]), 15_000, "the bot to start polling");
      server.script(reply.text("Hello from the onboarded bot."));
      telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hi" });
      const [sent] = await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the reply at sendMessage");
      assert.equal(sent!.payload.text, "Hello from the onboarded bot.");
      assert.equal(server.requests[1]!.headers.authorization, "Bearer sk-e2e-key");
      gateway.child.kill("SIGTERM");
      const result = await gateway.exited(8_000);
      assert.equal(result.code, 0, result.stderr);
    } finally {
      gateway.kill();
      await telegram.close();
    }
  });

  it("cancels without writing anything when the answers end early", async () => {
    const bubHome = join(home.path, "cancelled");
    const result = await runBub(["onboard", "--no-check"], { home: home.path, env: { BUB_HOME: bubHome }, input: "openai\ngpt-x\n" });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /Onboarding cancelled; nothing was written\./);
    await assert.rejects(readFile(join(bubHome, "config.yml")), { code: "ENOENT" });
  });
});
