import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

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
    assert.equal(onboard.stdout, `Saved config to ${join(bubHome, "config.yml")}\n`);
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
