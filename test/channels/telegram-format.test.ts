// A Markdown reply as Telegram messages: HTML converted with marked, split between blocks,
// each part valid and within the limit after conversion, plain text when Telegram refuses.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatReply, sendPart, type TelegramPart } from "../../src/channels/telegram/format.ts";
import { markdownToTelegramHtml } from "../../src/channels/telegram/markdown.ts";

/** Fails unless every tag of `html` is one Telegram knows, closed in order, and every `&` starts an entity. */
function assertValidTelegramHtml(html: string): void {
  const open: string[] = [];
  for (const match of html.matchAll(/<(\/?)([a-z-]+)[^>]*>/g)) {
    const [, closing, name] = match;
    assert.ok(["b", "i", "s", "code", "pre", "a", "blockquote", "tg-spoiler"].includes(name!), `unknown tag <${name}> in ${html.slice(0, 200)}`);
    if (closing) assert.equal(open.pop(), name, `</${name}> closes the wrong tag`);
    else open.push(name!);
  }
  assert.deepEqual(open, [], "every tag is closed");
  assert.doesNotMatch(html.replace(/<[^>]*>/g, ""), /&(?!amp;|lt;|gt;|quot;)|[<>]/, "no cut or bare entity");
}

describe("formatReply", () => {
  it("sends headings bold, emphasis as tags and code fences as <pre>, in one HTML message", () => {
    const parts = formatReply("**bold** and a\n\n## Title\n\n```js\ncode\n```");
    assert.deepEqual(parts, [
      {
        text: '<b>bold</b> and a\n\n<b>Title</b>\n\n<pre><code class="language-js">code</code></pre>',
        parseMode: "HTML",
        plain: "**bold** and a\n\n## Title\n\n```js\ncode\n```",
      },
    ]);
  });

  it("leaves text without markup exactly as written, with no parse mode", () => {
    assert.deepEqual(formatReply("Done."), [{ text: "Done.", parseMode: undefined, plain: "Done." }]);
  });

  it("escapes what Telegram would read as HTML, and keeps inline code in a list item as <code>", () => {
    assert.equal(markdownToTelegramHtml("- run `a < b` & see\n- [docs](https://e.x/?a=1&b=2)"), '• run <code>a &lt; b</code> &amp; see\n• <a href="https://e.x/?a=1&amp;b=2">docs</a>');
  });

  it("splits between blocks: every part valid HTML within the limit after conversion, nothing lost", () => {
    const paragraphs = Array.from({ length: 8 }, (_, index) => `**Part ${index}** ${"x < y & ".repeat(40).trim()}`);
    const code = Array.from({ length: 150 }, (_, index) => `line(${index}) < limit && ok;`).join("\n");
    const markdown = `${paragraphs.join("\n\n")}\n\n\`\`\`ts\n${code}\n\`\`\`\n\n## The end`;
    const parts = formatReply(markdown, 1000);
    assert.ok(parts.length > 5, `${parts.length} parts`);
    for (const part of parts) {
      assert.ok(part.text.length <= 1000 && part.plain.length <= 1000, `a part of ${part.text.length} / ${part.plain.length}`);
      assert.equal(part.parseMode, "HTML");
      assertValidTelegramHtml(part.text);
    }
    const html = parts.map((part) => part.text).join("\n");
    for (let index = 0; index < 8; index++) assert.ok(html.includes(`<b>Part ${index}</b>`), `paragraph ${index} is whole`);
    const codeLines = [...html.matchAll(/line\((\d+)\) &lt; limit &amp;&amp; ok;/g)].map((match) => Number(match[1]));
    assert.deepEqual(codeLines, Array.from({ length: 150 }, (_, index) => index), "every code line once, in order");
    assert.ok(parts.filter((part) => part.text.includes("line(")).every((part) => /^<pre><code class="language-ts">[^]*<\/code><\/pre>/.test(part.text.slice(part.text.indexOf("<pre>")))), "each piece of the code is a code block");
    assert.ok(parts.at(-1)!.text.endsWith("<b>The end</b>"));
  });

  it("cuts one block that grows past the limit by escaping without cutting an entity", () => {
    const parts = formatReply(`${"a<b ".repeat(900)}`, 1000);
    assert.ok(parts.length >= 4);
    for (const part of parts) {
      assert.ok(part.text.length <= 1000);
      assertValidTelegramHtml(part.text);
    }
    assert.equal(parts.map((part) => part.plain).join(" ").replace(/\s+/g, " ").trim(), "a<b ".repeat(900).trim(), "every word once, in order");
  });
});

describe("sendPart", () => {
  const part: TelegramPart = { text: "<b>hi</b>", parseMode: "HTML", plain: "**hi**" };
  const refusal = Object.assign(new Error("Call to 'sendMessage' failed!"), { description: "Bad Request: can't parse entities: unsupported start tag" });

  it("sends the plain text once when Telegram cannot parse the entities", async () => {
    const calls: [string, string | undefined][] = [];
    const heard: unknown[] = [];
    await sendPart(
      part,
      async (text, parseMode) => {
        calls.push([text, parseMode]);
        if (parseMode) throw refusal;
      },
      (error) => heard.push(error),
    );
    assert.deepEqual(calls, [["<b>hi</b>", "HTML"], ["**hi**", undefined]]);
    assert.deepEqual(heard, [refusal]);
  });

  it("passes other failures on, and tries the plain text only once", async () => {
    const calls: (string | undefined)[] = [];
    await assert.rejects(
      sendPart(part, async (_text, parseMode) => {
        calls.push(parseMode);
        throw new Error("chat not found");
      }),
      /chat not found/,
    );
    await assert.rejects(
      sendPart(part, async (_text, parseMode) => {
        calls.push(parseMode);
        throw refusal;
      }),
      /failed/,
    );
    assert.deepEqual(calls, ["HTML", "HTML", undefined]);
  });
});
