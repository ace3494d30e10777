/**
 * Scheduled turns with the installed package: `bub gateway` serving Telegram against a fake
 * Bot API, the model behind a fake OpenAI-compatible server. A turn the model schedules is
 * answered in its chat; a job added by `bub run` while no gateway ran is run once when the
 * gateway starts (or dropped with BUB_SCHEDULE_MISSED=skip).
 */
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { within } from "./support/live.ts";

describe("scheduled turns (installed package, fake Bot API)", () => {
  const fx = useGatewayFixture();

  const jobs = () => readdir(join(fx.bubHome, "schedules", "jobs")).catch(() => [] as string[]);

  it("answers a turn the model scheduled 1.5 s ahead in the same chat", async () => {
    fx.openai.script(
      reply.toolCalls([{ name: "schedule_add", arguments: JSON.stringify({ prompt: "Tell Alice the tea is ready.", delay_seconds: 1.5 }) }]),
      reply.text("Sure, in a moment."),
      reply.text("Your tea is ready."),
    );
    const live = await fx.start();
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "tell me when the tea is ready, in a second or so" });
    await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the first answer");
    const [first, second] = await within(fx.telegram.waitForCalls("sendMessage", 2), 15_000, "the scheduled answer");
    assert.deepEqual([first!.payload.text, second!.payload.text], ["Sure, in a moment.", "Your tea is ready."]);
    assert.equal(String(second!.payload.chat_id), String(ALICE));
    assert.match(String(fx.openai.requests[2]!.body.messages.at(-1)?.content), /\|schedule_id=sch-[0-9a-f]{8}\|scheduled_for=\S+Z\n---Date: .*---\nTell Alice the tea is ready\.$/);
    await fx.stop(live);
    assert.deepEqual(await jobs(), []);
  });

  it("runs a job added by bub run that fell due while no gateway ran, once, when the gateway starts", async () => {
    const added = await runBub(["run", `,schedule.add session=telegram:${ALICE} delay_seconds=1 prompt="Good morning"`], { home: fx.home, env: fx.env() });
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /scheduled sch-[0-9a-f]{8}: once at/);
    assert.equal((await jobs()).length, 1, "stored under BUB_HOME/schedules/jobs");
    await sleep(1_200);
    fx.openai.script(reply.text("Good morning, Alice!"));
    const live = await fx.start();
    const [sent] = await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the missed run's answer");
    assert.equal(sent!.payload.text, "Good morning, Alice!");
    assert.match(String(fx.openai.requests[0]!.body.messages.at(-1)?.content), /\|missed_run=true\n/);
    await fx.stop(live);
    assert.deepEqual(await jobs(), []);
  });

  it("drops a missed one-shot job without a turn when BUB_SCHEDULE_MISSED=skip", async () => {
    const added = await runBub(["run", `,schedule.add session=telegram:${ALICE} delay_seconds=1 prompt="Too late"`], { home: fx.home, env: fx.env() });
    assert.equal(added.code, 0, added.stderr);
    await sleep(1_200);
    const live = await fx.start({ BUB_SCHEDULE_MISSED: "skip" });
    const deadline = Date.now() + 5_000;
    while ((await jobs()).length > 0 && Date.now() < deadline) await sleep(50);
    assert.deepEqual(await jobs(), []);
    await sleep(300);
    await fx.stop(live);
    assert.equal(fx.openai.requests.length, 0);
    assert.equal(fx.telegram.callsOf("sendMessage").length, 0);
  });
});
