import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { tempDir } from "../support/temp.ts";
import { scheduleTools } from "../../src/schedule/tools.ts";
import { ScheduleStore } from "../../src/schedule/store.ts";
import { call, errorOf, fakeAgent, toolContext } from "../tools/support/tool-context.ts";

/** A tool context of a turn of Telegram chat `chat` (its state as the builtin plugin loads it). */
function telegramTurn(chat: string, config: Record<string, unknown> = {}) {
  return toolContext({ session_id: `telegram:${chat}`, context: `channel=$telegram|chat_id=${chat}` }, { agent: fakeAgent({ config }) });
}
const localTurn = () => toolContext({ session_id: "cli:local", context: "channel=$cli|chat_id=local" }, { agent: fakeAgent() });

async function withTools(body: (tools: ReturnType<typeof scheduleTools>, store: ScheduleStore) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  try {
    await body(scheduleTools({ home: dir.path }), new ScheduleStore(dir.path));
  } finally {
    await dir.cleanup();
  }
}

describe("schedule tools", () => {
  it("adds a cron job for this chat, lists it with its next run, and removes it", () =>
    withTools(async (tools, store) => {
      const context = telegramTurn("7");
      const added = String(await call(tools, "schedule.add", { prompt: "Good morning!", cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }, context));
      const id = /^scheduled (sch-[0-9a-f]{8}): cron "0 9 \* \* 1-5" \(Europe\/Berlin\), next (\S+), to session telegram:7$/.exec(added)?.[1];
      assert.ok(id, added);
      const [job] = await store.list();
      assert.deepEqual({ ...job, created_at: "" }, {
        id,
        session_id: "telegram:7",
        channel: "telegram",
        chat_id: "7",
        prompt: "Good morning!",
        cron: "0 9 * * 1-5",
        at: null,
        timezone: "Europe/Berlin",
        created_at: "",
      });
      const listed = String(await call(tools, "schedule.list", {}, context));
      assert.match(listed, new RegExp(`^${id}  cron "0 9 \\* \\* 1-5" \\(Europe/Berlin\\)  next \\S+Z  session telegram:7  prompt "Good morning!"$`));
      assert.equal(await call(tools, "schedule.remove", { id }, context), `removed ${id}`);
      assert.deepEqual(await store.ids(), []);
      assert.equal(await call(tools, "schedule.list", {}, context), "(no schedules for session telegram:7)");
    }));

  it("adds one-shot jobs from an ISO time or a delay", () =>
    withTools(async (tools, store) => {
      const context = telegramTurn("7");
      const at = new Date(Date.now() + 60_000);
      await call(tools, "schedule.add", { prompt: "a", at: at.toISOString().replace("Z", "+00:00") }, context);
      const before = Date.now();
      await call(tools, "schedule.add", { prompt: "b", delay_seconds: 1.5 }, context);
      const jobs = await store.list();
      const byPrompt = Object.fromEntries(jobs.map((job) => [job.prompt, job]));
      assert.equal(byPrompt.a!.at, at.toISOString());
      const delayed = Date.parse(byPrompt.b!.at!);
      assert.ok(delayed >= before + 1500 && delayed <= Date.now() + 1500);
      assert.equal(byPrompt.b!.cron, null);
    }));

  it("refuses unclear or impossible times with a message that says what to give", () =>
    withTools(async (tools, store) => {
      const context = telegramTurn("7");
      assert.equal(await errorOf(call(tools, "schedule.add", { prompt: "x" }, context)), "schedule.add: give exactly one of cron, at and delay_seconds");
      assert.equal(await errorOf(call(tools, "schedule.add", { prompt: "x", cron: "* * * * *", delay_seconds: 5 }, context)), "schedule.add: give exactly one of cron, at and delay_seconds");
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", cron: "every morning" }, context)), /^schedule\.add: 'every morning' is not a cron expression/);
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", cron: "0 9 * * *", timezone: "Mars/Olympus" }, context)), /'Mars\/Olympus' is not a time zone/);
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", at: "tomorrow-ish" }, context)), /'tomorrow-ish' is not an ISO time/);
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", at: "2001-01-01T00:00:00Z" }, context)), /has passed/);
      assert.deepEqual(await store.ids(), []);
    }));

  it("keeps a channel turn to its own session, as subagent does", () =>
    withTools(async (tools, store) => {
      const chat1 = telegramTurn("1");
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", delay_seconds: 60, session: "telegram:2" }, chat1)), /session 'telegram:2' belongs to another chat/);
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", delay_seconds: 60, session: "notes" }, chat1)), /only schedule into its own session|does not name a channel and chat/);
      // Another chat's jobs are invisible and cannot be removed from chat 1.
      await call(tools, "schedule.add", { prompt: "theirs", delay_seconds: 60 }, telegramTurn("2"));
      const [theirs] = await store.ids();
      assert.equal(await call(tools, "schedule.list", {}, chat1), "(no schedules for session telegram:1)");
      assert.match(await errorOf(call(tools, "schedule.list", { all: true }, chat1)), /only list its own session's schedules/);
      assert.match(await errorOf(call(tools, "schedule.remove", { id: theirs }, chat1)), /no schedule 'sch-[0-9a-f]{8}' in this session/);
      assert.deepEqual(await store.ids(), [theirs]);
      // With BUB_SUBAGENT_CROSS_SESSION=true the rule is lifted.
      const crossing = telegramTurn("1", { subagent_cross_session: true });
      assert.match(String(await call(tools, "schedule.add", { prompt: "x", delay_seconds: 60, session: "telegram:2" }, crossing)), /to session telegram:2$/);
    }));

  it("lets the local CLI schedule into a gateway chat and see every session, but not into cli itself", () =>
    withTools(async (tools, store) => {
      const local = localTurn();
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", delay_seconds: 60 }, local)), /the local cli channel is not served by 'bub gateway'/);
      assert.match(String(await call(tools, "schedule.add", { prompt: "ping", delay_seconds: 60, session: "telegram:42" }, local)), /to session telegram:42$/);
      const [job] = await store.list();
      assert.deepEqual([job!.channel, job!.chat_id], ["telegram", "42"]);
      assert.match(String(await call(tools, "schedule.list", { all: true }, local)), /session telegram:42  prompt "ping"$/);
      assert.equal(await call(tools, "schedule.remove", { id: job!.id }, local), `removed ${job!.id}`);
    }));
});
