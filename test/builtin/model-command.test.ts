import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createBub } from "../../src/builtin/create.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/temp.ts";

describe(",model", () => {
  let server: FakeOpenAI;
  before(async () => {
    server = await startFakeOpenAI({ models: ["small-model", "big-model"] });
  });
  after(() => server.close());

  async function bubIn(dir: string) {
    const home = join(dir, ".bub");
    const env = { BUB_MODEL: "fake:small-model", BUB_FALLBACK_MODELS: '["fake:big-model"]', BUB_FAKE_API_BASE: server.url, BUB_FAKE_API_KEY: "sk-test", BUB_HOME: home };
    const framework = await createBub({ workspace: dir, home, env });
    return (content: string) => framework.running(() => framework.processInbound({ session_id: "s", channel: "cli", chat_id: "c", content }));
  }

  it("refuses a model its provider does not list, suggests the closest, and leaves the session as it was", async () => {
    const dir = await tempDir();
    try {
      const send = await bubIn(dir.path);
      await send(",model fake:big-model");
      const wrong = await send(",model fake:big-modle");
      const error = wrong.outbounds.find((outbound) => (outbound as { kind?: string }).kind === "error") as { content?: string } | undefined;
      assert.match(String(error?.content), /Unknown model 'big-modle' for provider 'fake'; did you mean fake:big-model, fake:small-model\? The session model is unchanged/);
      const shown = await send(",model");
      assert.match(shown.modelOutput, /^Current model: fake:big-model\nFallback models: fake:big-model\n/);
      server.script(reply.text("still big"));
      await send("hello");
      assert.equal(server.requests.at(-1)!.body.model, "big-model");
    } finally {
      await dir.cleanup();
    }
  });

  it("refuses an unknown provider in one line", async () => {
    const dir = await tempDir();
    try {
      const send = await bubIn(dir.path);
      const result = await send(",model nowhere:thing");
      const error = result.outbounds.find((outbound) => (outbound as { kind?: string }).kind === "error") as { content?: string } | undefined;
      assert.match(String(error?.content), /Unknown provider 'nowhere'.*The session model is unchanged\.$/);
    } finally {
      await dir.cleanup();
    }
  });
});
