// What bub itself puts in a model request (system prompt, tool schemas, the skills block, the
// Telegram skill a Telegram message expands, the message's framing) is ASCII. One character
// above U+00FF anywhere makes V8 hold the whole request body as a two-byte string: twice the
// memory, and serialising, checking and UTF-8 encoding it cost several times more on every
// model call. An ASCII message must therefore give an ASCII request.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { reply, startFakeOpenAI } from "../support/fake-openai.ts";
import { withSourceGateway } from "../support/source-gateway.ts";

const CHAT = 7;

describe("a Telegram turn's model request", () => {
  it("is ASCII when the message is", { timeout: 60_000 }, async () => {
    const openai = await startFakeOpenAI();
    openai.script(reply.text("Hello there."));
    try {
      await withSourceGateway({ BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_API_KEY: "x" }, async ({ telegram }) => {
        telegram.sendText({ chatId: CHAT, userId: CHAT, text: "hi, what can you do with $telegram here?" });
        const [sent] = await telegram.waitForCalls("sendMessage", 1);
        assert.equal(sent?.payload.text, "Hello there.");
        const body = JSON.stringify(openai.requests[0]?.body);
        assert.match(body, /telegram\.send/, "the Telegram skill is expanded in the request");
        const wide = [...new Set(body.match(/[^\x00-\x7f]/g) ?? [])];
        const where = wide.map((char) => body.slice(Math.max(0, body.indexOf(char) - 40), body.indexOf(char) + 10));
        assert.deepEqual(wide, [], `not ASCII: ${JSON.stringify(where)}`);
      });
    } finally {
      await openai.close();
    }
  });
});
