import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "../support/temp.ts";
import { newJobId, type ScheduleJob } from "../../src/schedule/job.ts";
import { Scheduler, type MissedPolicy, type ScheduledRun } from "../../src/schedule/scheduler.ts";
import { ScheduleStore } from "../../src/schedule/store.ts";

function job(fields: Partial<ScheduleJob> & Pick<ScheduleJob, "cron" | "at">): ScheduleJob {
  return {
    id: newJobId(),
    session_id: "telegram:7",
    channel: "telegram",
    chat_id: "7",
    prompt: "check the weather",
    timezone: null,
    created_at: new Date().toISOString(),
    ...fields,
  };
}

/** A scheduler over `store` recording every run it hands over. */
/** `minIntervalSeconds` null: the Scheduler's default. */
function recording(store: ScheduleStore, missed?: MissedPolicy, minIntervalSeconds: number | null = 0) {
  const runs: { job: ScheduleJob; run: ScheduledRun; at: number }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const scheduler = new Scheduler({
    store,
    missed,
    minIntervalSeconds: minIntervalSeconds ?? undefined,
    rescanMs: 60_000,
    async deliver(job, run) {
      runs.push({ job, run, at: Date.now() });
      for (const waiter of waiters.filter((candidate) => runs.length >= candidate.count)) waiter.resolve();
    },
  });
  const waitForRuns = (count: number, timeoutMs = 5_000) =>
    runs.length >= count
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`only ${runs.length} of ${count} runs after ${timeoutMs} ms`)), timeoutMs);
          waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
        });
  return { scheduler, runs, waitForRuns };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("Scheduler", () => {
  it("fires a one-shot job at its time, then deletes it and its state", async () => {
    const dir = await tempDir();
    const store = new ScheduleStore(dir.path);
    const { scheduler, runs, waitForRuns } = recording(store);
    try {
      const at = new Date(Date.now() + 300);
      const oneShot = job({ cron: null, at: at.toISOString() });
      await store.add(oneShot);
      await scheduler.start();
      await waitForRuns(1);
      assert.equal(runs[0]!.job.id, oneShot.id);
      assert.equal(runs[0]!.run.scheduledFor.getTime(), at.getTime());
      assert.equal(runs[0]!.run.missed, false);
      assert.ok(runs[0]!.at >= at.getTime() && runs[0]!.at - at.getTime() < 200, `fired ${runs[0]!.at - at.getTime()} ms after its time`);
      await sleep(100);
      assert.deepEqual(await store.ids(), []);
      assert.deepEqual(await readdir(store.stateDir), []);
      assert.equal(scheduler.size, 0);
    } finally {
      await scheduler.stop();
      await dir.cleanup();
    }
  });

  it("fires a cron job every second and records each run", async () => {
    const dir = await tempDir();
    const store = new ScheduleStore(dir.path);
    const { scheduler, runs, waitForRuns } = recording(store);
    try {
      const everySecond = job({ cron: "* * * * * *", at: null });
      await store.add(everySecond);
      await scheduler.start();
      await waitForRuns(3, 5_000);
      const times = runs.map((entry) => entry.run.scheduledFor.getTime());
      assert.ok(times.every((time) => time % 1000 === 0), "runs fall on whole seconds");
      assert.deepEqual(times.slice(1).map((time, index) => time - times[index]!), [1000, 1000].slice(0, times.length - 1));
      const state = JSON.parse(await readFile(join(store.stateDir, `${everySecond.id}.json`), "utf8"));
      assert.ok(Date.parse(state.last_run_at) >= times[1]!);
      assert.deepEqual(await store.ids(), [everySecond.id], "a cron job stays");
    } finally {
      await scheduler.stop();
      await dir.cleanup();
    }
  });

  it("picks up jobs added and removed while it runs", async () => {
    const dir = await tempDir();
    const store = new ScheduleStore(dir.path);
    const { scheduler, runs, waitForRuns } = recording(store);
    try {
      await scheduler.start();
      const removed = job({ cron: null, at: new Date(Date.now() + 700).toISOString() });
      const kept = job({ cron: null, at: new Date(Date.now() + 500).toISOString() });
      await store.add(removed);
      await store.add(kept);
      await scheduler.rescan();
      assert.equal(scheduler.size, 2);
      await store.remove(removed.id);
      await scheduler.rescan();
      await waitForRuns(1);
      await sleep(500);
      assert.deepEqual(runs.map((entry) => entry.job.id), [kept.id]);
    } finally {
      await scheduler.stop();
      await dir.cleanup();
    }
  });

  it("keeps jobs and the last run of cron jobs across a restart", async () => {
    const dir = await tempDir();
    const later = job({ cron: null, at: new Date(Date.now() + 1_500).toISOString() });
    const everySecond = job({ cron: "* * * * * *", at: null });
    const first = recording(new ScheduleStore(dir.path));
    await first.scheduler.start();
    await new ScheduleStore(dir.path).add(later);
    await new ScheduleStore(dir.path).add(everySecond);
    await first.scheduler.rescan();
    await first.waitForRuns(1);
    await first.scheduler.stop();
    assert.deepEqual(first.runs.map((entry) => entry.job.id), [everySecond.id]);
    const lastRun = first.runs[0]!.run.scheduledFor;
    // A new process: the one-shot is still there, the cron job's last run is remembered,
    // so nothing counts as missed if it restarts within the same second.
    const store = new ScheduleStore(dir.path);
    assert.deepEqual(await store.ids(), [later.id, everySecond.id].sort());
    assert.equal((await store.runState(everySecond.id))?.last_run_at, lastRun.toISOString());
    const second = recording(store);
    try {
      await second.scheduler.start();
      const deadline = Date.now() + 5_000;
      while (!second.runs.some((entry) => entry.job.id === later.id) && Date.now() < deadline) await sleep(20);
      const fired = second.runs.find((entry) => entry.job.id === later.id);
      assert.ok(fired, "the one-shot job ran after the restart");
      assert.equal(fired.run.missed, false);
      assert.equal(fired.run.scheduledFor.toISOString(), later.at);
      const cronRuns = second.runs.filter((entry) => entry.job.id === everySecond.id);
      assert.ok(cronRuns.every((entry) => entry.run.scheduledFor > lastRun), "no run repeated after the restart");
    } finally {
      await second.scheduler.stop();
      await dir.cleanup();
    }
  });

  for (const policy of ["run_once", "skip"] as const) {
    it(`handles runs missed while down with missed=${policy}`, async () => {
      // The minutely job's next regular run is at the next minute boundary: start well clear of
      // it, so that run cannot fall in the test's window (with missed=skip it would be the only run).
      const toBoundary = 60_000 - (Date.now() % 60_000);
      if (toBoundary < 3_000) await sleep(toBoundary + 100);
      const dir = await tempDir();
      const store = new ScheduleStore(dir.path);
      const hourAgo = new Date(Date.now() - 3_600_000);
      // Every minute since an hour ago: about sixty missed runs, run at most once.
      const minutely = job({ cron: "* * * * *", at: null, created_at: hourAgo.toISOString() });
      const overdue = job({ cron: null, at: new Date(Date.now() - 60_000).toISOString() });
      // Last run at the latest past match: nothing missed.
      const upToDate = job({ cron: "0 0 1 1 *", at: null, created_at: hourAgo.toISOString() });
      await store.add(minutely);
      await store.add(overdue);
      await store.add(upToDate);
      const lastMatch = new Date(Date.UTC(new Date().getUTCFullYear(), 0, 1));
      await store.recordRun(upToDate.id, new Date(Math.min(lastMatch.getTime(), Date.now())), new Date());
      // Runs kept 60 s apart, so a minute boundary passing during the test adds no regular run.
      const { scheduler, runs, waitForRuns } = recording(store, policy, 60);
      try {
        await scheduler.start();
        if (policy === "run_once") await waitForRuns(2);
        await sleep(300);
        const fired = runs.map((entry) => entry.job.id).sort();
        if (policy === "run_once") {
          assert.deepEqual(fired, [minutely.id, overdue.id].sort());
          assert.ok(runs.every((entry) => entry.run.missed));
          const minutelyRun = runs.find((entry) => entry.job.id === minutely.id)!;
          assert.equal(minutelyRun.run.scheduledFor.getTime(), Math.ceil((hourAgo.getTime() + 1) / 60_000) * 60_000, "the first missed match");
        } else {
          assert.deepEqual(fired, []);
        }
        assert.deepEqual(await store.ids(), [minutely.id, upToDate.id].sort(), "the overdue one-shot is gone either way");
        assert.equal(scheduler.size, 2, "cron jobs keep running");
      } finally {
        await scheduler.stop();
        await dir.cleanup();
      }
    });
  }

  it("keeps the runs of a stored job that matches every second at least the minimum interval apart", async () => {
    const dir = await tempDir();
    const store = new ScheduleStore(dir.path);
    const everySecond = job({ cron: "* * * * * *", at: null });
    await store.add(everySecond);
    const { scheduler, runs, waitForRuns } = recording(store, "run_once", 2);
    try {
      await scheduler.start();
      await waitForRuns(2, 8_000);
      const [first, second] = runs.map((entry) => entry.run.scheduledFor.getTime());
      assert.ok(second! - first! >= 2_000, `runs ${second! - first!} ms apart`);
    } finally {
      await scheduler.stop();
      await dir.cleanup();
    }
  });

  it("does not run a too-frequent job again after a restart before the minimum interval (default 60 s) has passed since its last run", async () => {
    const dir = await tempDir();
    const store = new ScheduleStore(dir.path);
    const everySecond = job({ cron: "* * * * * *", at: null, created_at: new Date(Date.now() - 3_600_000).toISOString() });
    await store.add(everySecond);
    const lastRun = new Date(Math.floor(Date.now() / 1000) * 1000 - 5_000);
    await store.recordRun(everySecond.id, lastRun, lastRun);
    // The Scheduler's own default, as a gateway without the setting gets it.
    const { scheduler, runs } = recording(store, "run_once", null);
    try {
      await scheduler.start();
      assert.equal(scheduler.size, 1, "the job stays armed");
      await sleep(1_500);
      assert.deepEqual(runs, [], "no missed run and no run every second");
    } finally {
      await scheduler.stop();
      await dir.cleanup();
    }
  });

  it("skips a malformed job file with a warning and runs the others", async () => {
    const dir = await tempDir();
    const store = new ScheduleStore(dir.path);
    await store.prepare();
    await writeFile(join(store.jobsDir, "sch-00000000.json"), "{ not json");
    const good = job({ cron: null, at: new Date(Date.now() + 200).toISOString() });
    await store.add(good);
    const { scheduler, runs, waitForRuns } = recording(store);
    try {
      await scheduler.start();
      await waitForRuns(1);
      assert.deepEqual(runs.map((entry) => entry.job.id), [good.id]);
    } finally {
      await scheduler.stop();
      await dir.cleanup();
    }
  });
});
