/**
 * The installed `bub gateway` sends a Markdown answer to Telegram formatted: as Telegram HTML
 * (headings bold, code fences as <pre>), and as plain text when the Bot API cannot parse
 * the entities. Fake Bot API and model server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { pollUntil, within } from "./support/live.ts";

const ANSWER = "**bold** and a\n\n## Title\n\n```js\ncode\n```";

describe("bub gateway formats its Telegram replies (installed package, fake Bot API)", () => {
  const fx = useGatewayFixture();

  it("sends a Markdown answer as Telegram HTML: bold, the heading bold, the code fence as <pre>", async () => {
    fx.openai.script(reply.text(ANSWER));
    const live = await fx.start();
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "format please" });
    const [sent] = await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the reply at sendMessage");
    assert.equal(sent!.payload.parse_mode, "HTML");
    assert.equal(sent!.payload.text, '<b>bold</b> and a\n\n<b>Title</b>\n\n<pre><code class="language-js">code</code></pre>');
    await fx.stop(live);
    assert.equal(fx.telegram.callsOf("sendMessage").length, 1);
  });

  it("sends the answer as plain text when Telegram cannot parse the entities, once", async () => {
    fx.openai.script(reply.text(ANSWER));
    const live = await fx.start();
    fx.telegram.fail("sendMessage", { status: 400, description: "Bad Request: can't parse entities: Unsupported start tag \"pre\" at byte offset 40" });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "format please" });
    const calls = await within(fx.telegram.waitForCalls("sendMessage", 2), 15_000, "the refused reply and the plain one");
    assert.deepEqual(
      calls.map((call) => [call.status, call.payload.parse_mode, call.payload.text]),
      [
        [400, "HTML", '<b>bold</b> and a\n\n<b>Title</b>\n\n<pre><code class="language-js">code</code></pre>'],
        [200, undefined, ANSWER],
      ],
    );
    await pollUntil(() => (/WARN bub:telegram telegram\.send formatting refused session_id=telegram:7 chat_id=7 part=1\/1: .*can't parse entities.*; sent as plain text/.test(live.stderr()) ? true : undefined), "the warning on stderr");
    await fx.stop(live);
    assert.equal(fx.telegram.callsOf("sendMessage").length, 2, "no third try");
  });
});
