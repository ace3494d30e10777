/**
 * Identity links on the installed package (issue 36): `bub link` prints a one-time code, the
 * user sends `,link CODE` to the bot in a private chat, and from then on that user's private
 * messages and `bub run` share one session (both channels' `share_linked_sessions` on), with
 * the links in `links.json` or, with `BUB_TAPE_STORE=sqlite`, in the SQLite database; an
 * unlinked user's messages and a group message never join it. Fake Bot API and model.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it } from "node:test";
import { reply, type RecordedRequest } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { readTapes, startBub, within } from "./support/live.ts";

const BOB = 8;
const GROUP = -100;
const texts = (request: RecordedRequest | undefined): string => JSON.stringify(request?.body.messages ?? []);

describe("identity links share a person's private sessions across channels (installed package)", () => {
  const fixture = useGatewayFixture();

  for (const store of ["file", "sqlite"]) {
    it(`a linked Telegram user's message is in bub run's context; an unlinked user's and a group's are not (${store} store)`, async () => {
      const shared = { BUB_TELEGRAM_SHARE_LINKED_SESSIONS: "true", BUB_CLI_SHARE_LINKED_SESSIONS: "true", BUB_TELEGRAM_ALLOW_USERS: `${ALICE},${BOB}`, BUB_TAPE_STORE: store };
      fixture.openai.script(reply.text("noted pineapple"), reply.text("noted banana"), reply.text("noted kiwi"), reply.text("you said pineapple"));
      const gateway = await fixture.start(shared);

      const issued = await runBub(["link"], { home: fixture.home, env: fixture.env(shared) });
      assert.equal(issued.code, 0, issued.stderr);
      const code = /Link code: ([A-Z0-9]+)/.exec(issued.stdout)?.[1];
      assert.ok(code, issued.stdout);

      // A wrong code first: refused, nothing linked.
      fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: ",link WRONG234" });
      const [refused] = await within(fixture.telegram.waitForCalls("sendMessage", 1), 15_000, "the refusal of a wrong code");
      assert.match(String(refused?.payload.text), /wrong, expired or used/);
      fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: `/link ${code}` });
      const [, linked] = await within(fixture.telegram.waitForCalls("sendMessage", 2), 15_000, "the link confirmation");
      assert.match(String(linked?.payload.text), /Linked: cli:.*telegram:7/);
      // The code works once.
      fixture.telegram.sendText({ chatId: BOB, userId: BOB, text: `,link ${code}` });
      const [, , reused] = await within(fixture.telegram.waitForCalls("sendMessage", 3), 15_000, "the refusal of a used code");
      assert.match(String(reused?.payload.text), /wrong, expired or used/);

      fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "remember pineapple" });
      await within(fixture.telegram.waitForCalls("sendMessage", 4), 15_000, "the answer to Alice");
      fixture.telegram.sendText({ chatId: BOB, userId: BOB, text: "remember banana" });
      await within(fixture.telegram.waitForCalls("sendMessage", 5), 15_000, "the answer to Bob");
      fixture.telegram.sendMessage({ chatId: GROUP, chatType: "group", from: { id: ALICE, username: "alice", first_name: "Alice" }, fields: { text: "bub remember kiwi" } });
      const calls = await within(fixture.telegram.waitForCalls("sendMessage", 6), 15_000, "the answer in the group");
      // Replies go back where each message came from.
      assert.deepEqual(calls.slice(3).map((call) => [Number(call.payload.chat_id), call.payload.text]), [
        [ALICE, "noted pineapple"],
        [BOB, "noted banana"],
        [GROUP, "noted kiwi"],
      ]);
      await fixture.stop(gateway);

      const listed = await runBub(["link", "list"], { home: fixture.home, env: fixture.env(shared) });
      assert.match(listed.stdout, /^p_[0-9a-f]+ {2}cli:\S+, telegram:7 /m);

      const run = await runBub(["run", "what did I ask you to remember?"], { home: fixture.home, env: fixture.env(shared) });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /you said pineapple/);
      const context = texts(fixture.openai.requests[3]);
      assert.match(context, /remember pineapple/, "the linked user's Telegram message is in the CLI turn's context");
      assert.doesNotMatch(context, /banana/, "an unlinked user's message is not");
      assert.doesNotMatch(context, /kiwi/, "a group message is not");
      // With SQLite the links are a row of the tape database, not a file beside it.
      assert.equal(existsSync(join(fixture.bubHome, "links.json")), store === "file");
      if (store === "sqlite") {
        const database = new DatabaseSync(join(fixture.bubHome, "tapes.sqlite3"), { readOnly: true });
        const row = database.prepare("SELECT state FROM identity_links").get();
        database.close();
        assert.match(String(row?.state), /telegram:7/);
      }
    });
  }

  it("bub chat continues a linked Telegram user's conversation with its context", async () => {
    const shared = { BUB_TELEGRAM_SHARE_LINKED_SESSIONS: "true", BUB_CLI_SHARE_LINKED_SESSIONS: "true" };
    fixture.openai.script(reply.text("noted papaya"), reply.text("you told me papaya on Telegram"));
    const gateway = await fixture.start(shared);
    const issued = await runBub(["link"], { home: fixture.home, env: fixture.env(shared) });
    const code = /Link code: ([A-Z0-9]+)/.exec(issued.stdout)?.[1];
    assert.ok(code, issued.stdout);
    fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: `,link ${code}` });
    await within(fixture.telegram.waitForCalls("sendMessage", 1), 15_000, "the link confirmation");
    fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "remember papaya" });
    await within(fixture.telegram.waitForCalls("sendMessage", 2), 15_000, "the answer to Alice");
    await fixture.stop(gateway);

    const chat = await startBub(["chat"], { home: fixture.home, env: fixture.env(shared) });
    chat.child.stdin.end("what did I ask you to remember?\n");
    const result = await chat.exited();
    assert.equal(result.code, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    assert.match(result.stdout, /you told me papaya on Telegram/);
    const context = texts(fixture.openai.requests[1]);
    assert.match(context, /remember papaya/, "the Telegram message is in the chat turn's context");
    assert.match(context, /noted papaya/, "and so is the answer the bot gave there");
    // Both turns went to the person's one tape.
    const tapes = [...(await readTapes(fixture.bubHome)).entries()].filter(([, entries]) => JSON.stringify(entries).includes("remember papaya"));
    assert.equal(tapes.length, 1, "one tape holds the Telegram message");
    assert.match(JSON.stringify(tapes[0]?.[1]), /what did I ask you to remember/);
  });

  it("keeps sessions apart while the setting is off (the default), and bub link remove unlinks", async () => {
    fixture.openai.script(reply.text("noted mango"), reply.text("nothing"));
    const gateway = await fixture.start();
    const issued = await runBub(["link"], { home: fixture.home, env: fixture.env() });
    const code = /Link code: ([A-Z0-9]+)/.exec(issued.stdout)?.[1];
    fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: `,link ${code}` });
    await within(fixture.telegram.waitForCalls("sendMessage", 1), 15_000, "the link confirmation");
    fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "remember mango" });
    await within(fixture.telegram.waitForCalls("sendMessage", 2), 15_000, "the answer");
    await fixture.stop(gateway);
    const run = await runBub(["run", "what did I say?"], { home: fixture.home, env: fixture.env() });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(texts(fixture.openai.requests[1]), /mango/);

    const removed = await runBub(["link", "remove", "telegram:7"], { home: fixture.home, env: fixture.env() });
    assert.equal(removed.code, 0, removed.stderr);
    const listed = await runBub(["link", "list"], { home: fixture.home, env: fixture.env() });
    assert.match(listed.stdout, /No linked identities/);
    const again = await runBub(["link", "remove", "telegram:7"], { home: fixture.home, env: fixture.env() });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^bub: telegram:7 is not linked — /);
  });
});
