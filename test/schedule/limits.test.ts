import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { tempDir } from "../support/temp.ts";
import { scheduleTools, type ScheduleToolsHost } from "../../src/schedule/tools.ts";
import { ScheduleStore } from "../../src/schedule/store.ts";
import { smallestGapMs } from "../../src/schedule/timing.ts";
import type { ScheduleLimits } from "../../src/schedule/settings.ts";
import { call, errorOf, fakeAgent, toolContext } from "../tools/support/tool-context.ts";

const telegramTurn = (chat: string, extraContext = "") =>
  toolContext({ session_id: `telegram:${chat}`, context: `channel=$telegram|chat_id=${chat}${extraContext}` }, { agent: fakeAgent() });

async function withTools(limits: ScheduleLimits | null, body: (tools: ReturnType<typeof scheduleTools>, store: ScheduleStore) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  const host: ScheduleToolsHost = limits ? { home: dir.path, limits: async () => limits } : { home: dir.path };
  try {
    await body(scheduleTools(host), new ScheduleStore(dir.path));
  } finally {
    await dir.cleanup();
  }
}

describe("smallestGapMs", () => {
  it("measures the gap between upcoming runs, not the look of the expression", () => {
    const after = new Date("2026-03-02T00:00:00Z");
    assert.equal(smallestGapMs("* * * * * *", null, after), 1_000);
    assert.equal(smallestGapMs("*/30 * * * * *", null, after), 30_000);
    assert.equal(smallestGapMs("* * * * *", null, after), 60_000);
    assert.equal(smallestGapMs("0,1 9 * * *", null, after), 60_000, "twice a minute apart, once a day");
    assert.equal(smallestGapMs("0 9 * * 1-5", "Europe/Berlin", after), 24 * 3_600_000);
  });
});

describe("schedule.add limits", () => {
  it("refuses a cron job that runs more often than the minimum interval (default 60 s), naming the setting", () =>
    withTools(null, async (tools, store) => {
      const context = telegramTurn("7");
      for (const cron of ["* * * * * *", "*/30 * * * * *", "0,30 * * * * *"]) {
        const message = await errorOf(call(tools, "schedule.add", { prompt: "x", cron }, context));
        assert.match(message, /^schedule\.add: cron ".*" runs as often as every \d+ s, more often than the minimum of 60 s set by BUB_SCHEDULE_MIN_INTERVAL_SECONDS \(schedule\.min_interval_seconds in config\.yml\); /, message);
      }
      assert.deepEqual(await store.ids(), []);
      assert.match(String(await call(tools, "schedule.add", { prompt: "x", cron: "* * * * *" }, context)), /^scheduled sch-/);
    }));

  it("follows the configured minimum, and 0 lifts it", async () => {
    await withTools({ minIntervalSeconds: 600, maxJobsPerSession: 20 }, async (tools) => {
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "x", cron: "*/5 * * * *" }, telegramTurn("7"))), /every 300 s, more often than the minimum of 600 s/);
    });
    await withTools({ minIntervalSeconds: 0, maxJobsPerSession: 20 }, async (tools) => {
      assert.match(String(await call(tools, "schedule.add", { prompt: "x", cron: "* * * * * *" }, telegramTurn("7"))), /^scheduled sch-/);
    });
  });

  it("refuses a scheduled run's one-shot job sooner than the minimum, so a run cannot re-add itself every second", () =>
    withTools(null, async (tools, store) => {
      const scheduledRun = telegramTurn("7", "|schedule_id=sch-0123abcd|scheduled_for=2026-01-01T00:00:00.000Z");
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "again", delay_seconds: 1 }, scheduledRun)), /a scheduled run may not add a job sooner than 60 s ahead \(BUB_SCHEDULE_MIN_INTERVAL_SECONDS/);
      assert.deepEqual(await store.ids(), []);
      assert.match(String(await call(tools, "schedule.add", { prompt: "later", delay_seconds: 120 }, scheduledRun)), /^scheduled sch-/);
      // A person asking for a reminder in a few seconds still gets it.
      assert.match(String(await call(tools, "schedule.add", { prompt: "soon", delay_seconds: 5 }, telegramTurn("7"))), /^scheduled sch-/);
    }));

  it("caps the jobs of one session (default 20), other sessions unaffected, and a removal makes room", () =>
    withTools(null, async (tools, store) => {
      const chat = telegramTurn("7");
      for (let index = 0; index < 20; index++) await call(tools, "schedule.add", { prompt: `job ${index}`, delay_seconds: 3_600 }, chat);
      const refused = await errorOf(call(tools, "schedule.add", { prompt: "one more", cron: "0 9 * * *" }, chat));
      assert.equal(
        refused,
        "schedule.add: session telegram:7 already has 20 schedules, the most BUB_SCHEDULE_MAX_JOBS_PER_SESSION (schedule.max_jobs_per_session in config.yml) allows; remove one with schedule.remove (schedule.list shows them) or raise the setting",
      );
      assert.equal((await store.ids()).length, 20);
      assert.match(String(await call(tools, "schedule.add", { prompt: "other chat", delay_seconds: 60 }, telegramTurn("8"))), /to session telegram:8$/);
      const [first] = (await store.list()).filter((job) => job.session_id === "telegram:7");
      await call(tools, "schedule.remove", { id: first!.id }, chat);
      assert.match(String(await call(tools, "schedule.add", { prompt: "fits again", delay_seconds: 60 }, chat)), /^scheduled sch-/);
    }));

  it("follows the configured cap, and 0 lifts it", async () => {
    await withTools({ minIntervalSeconds: 60, maxJobsPerSession: 1 }, async (tools) => {
      await call(tools, "schedule.add", { prompt: "a", delay_seconds: 60 }, telegramTurn("7"));
      assert.match(await errorOf(call(tools, "schedule.add", { prompt: "b", delay_seconds: 60 }, telegramTurn("7"))), /already has 1 schedules/);
    });
    await withTools({ minIntervalSeconds: 60, maxJobsPerSession: 0 }, async (tools, store) => {
      for (let index = 0; index < 25; index++) await call(tools, "schedule.add", { prompt: `job ${index}`, delay_seconds: 60 }, telegramTurn("7"));
      assert.equal((await store.ids()).length, 25);
    });
  });
});

describe("schedule.add cap under concurrent calls", () => {
  it("stores no more than the cap when one model step adds many jobs at once", () =>
    withTools({ minIntervalSeconds: 60, maxJobsPerSession: 3 }, async (tools, store) => {
      const chat = telegramTurn("7");
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => call(tools, "schedule.add", { prompt: `job ${index}`, delay_seconds: 60 }, chat)));
      assert.equal(results.filter((result) => result.status === "fulfilled").length, 3);
      assert.equal((await store.ids()).length, 3);
    }));
});
