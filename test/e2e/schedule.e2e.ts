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
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { startBub, within, type LiveBub } from "./support/live.ts";

const TOKEN = "123456:E2E-TOKEN";
const ALICE = 7;

describe("scheduled turns (installed package, fake Bot API)", () => {
  let openai: FakeOpenAI;
  let telegram: FakeTelegram;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let bubHome: string;
  let gateway: LiveBub | null = null;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    telegram = await startFakeTelegram({ token: TOKEN });
    home = await tempHome();
    bubHome = join(home.path, ".bub");
  });
  afterEach(async () => {
    gateway?.kill();
    gateway = null;
    await telegram.close();
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  const env = (extra: Record<string, string> = {}) => ({
    BUB_HOME: bubHome,
    BUB_MODEL: "local:any",
    BUB_API_BASE: openai.url,
    BUB_TELEGRAM_TOKEN: TOKEN,
    BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
    BUB_TELEGRAM_ALLOW_USERS: String(ALICE),
    BUB_DEBOUNCE_SECONDS: "0",
    ...extra,
  });

  async function startGateway(extra: Record<string, string> = {}): Promise<LiveBub> {
    gateway = await startBub(["gateway"], { home: home.path, env: env(extra) });
    await within(telegram.waitForCalls("deleteWebhook", 1), 15_000, "the bot to start polling");
    return gateway;
  }

  async function stop(live: LiveBub): Promise<void> {
    live.child.kill("SIGTERM");
    const result = await live.exited(8_000);
    assert.equal(result.code, 0, `exit ${result.code}\nstderr:\n${result.stderr}`);
  }

  const jobs = () => readdir(join(bubHome, "schedules", "jobs")).catch(() => [] as string[]);

  it("answers a turn the model scheduled 1.5 s ahead in the same chat", async () => {
    openai.script(
      reply.toolCalls([{ name: "schedule_add", arguments: JSON.stringify({ prompt: "Tell Alice the tea is ready.", delay_seconds: 1.5 }) }]),
      reply.text("Sure, in a moment."),
      reply.text("Your tea is ready."),
    );
    const live = await startGateway();
    telegram.sendText({ chatId: ALICE, userId: ALICE, text: "tell me when the tea is ready, in a second or so" });
    await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the first answer");
    const [first, second] = await within(telegram.waitForCalls("sendMessage", 2), 15_000, "the scheduled answer");
    assert.deepEqual([first!.payload.text, second!.payload.text], ["Sure, in a moment.", "Your tea is ready."]);
    assert.equal(String(second!.payload.chat_id), String(ALICE));
    assert.match(String(openai.requests[2]!.body.messages.at(-1)?.content), /\|schedule_id=sch-[0-9a-f]{8}\|scheduled_for=\S+Z\n---Date: .*---\nTell Alice the tea is ready\.$/);
    await stop(live);
    assert.deepEqual(await jobs(), []);
  });

  it("runs a job added by bub run that fell due while no gateway ran, once, when the gateway starts", async () => {
    const added = await runBub(["run", `,schedule.add session=telegram:${ALICE} delay_seconds=1 prompt="Good morning"`], { home: home.path, env: env() });
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /scheduled sch-[0-9a-f]{8}: once at/);
    assert.equal((await jobs()).length, 1, "stored under BUB_HOME/schedules/jobs");
    await sleep(1_200);
    openai.script(reply.text("Good morning, Alice!"));
    const live = await startGateway();
    const [sent] = await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the missed run's answer");
    assert.equal(sent!.payload.text, "Good morning, Alice!");
    assert.match(String(openai.requests[0]!.body.messages.at(-1)?.content), /\|missed_run=true\n/);
    await stop(live);
    assert.deepEqual(await jobs(), []);
  });

  it("drops a missed one-shot job without a turn when BUB_SCHEDULE_MISSED=skip", async () => {
    const added = await runBub(["run", `,schedule.add session=telegram:${ALICE} delay_seconds=1 prompt="Too late"`], { home: home.path, env: env() });
    assert.equal(added.code, 0, added.stderr);
    await sleep(1_200);
    const live = await startGateway({ BUB_SCHEDULE_MISSED: "skip" });
    const deadline = Date.now() + 5_000;
    while ((await jobs()).length > 0 && Date.now() < deadline) await sleep(50);
    assert.deepEqual(await jobs(), []);
    await sleep(300);
    await stop(live);
    assert.equal(openai.requests.length, 0);
    assert.equal(telegram.callsOf("sendMessage").length, 0);
  });
});
