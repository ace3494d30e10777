/**
 * Where schedules live: one JSON file per job under `<BUB_HOME>/schedules/jobs/`, and one
 * per cron job under `<BUB_HOME>/schedules/state/` for its last run. A job file is written once
 * (by `schedule.add`, in whatever `bub` process runs the turn) and deleted by
 * `schedule.remove` or after a one-shot run; only the gateway writes state files. Separate
 * files need no lock between processes and can never lose another writer's update; every
 * write goes to a temporary file that is then renamed over the target, so a reader sees
 * the old file or the new one, never a torn one. See docs/schedule.md.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FileRefusedError, readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "../config/bounded-file.ts";
import { errorCode } from "../config/thrown.ts";
import { createLogger } from "../kernel/log.ts";
import { isJobId, parseJob, parseRunState, type ScheduleJob, type ScheduleRunState } from "./job.ts";

const log = createLogger("bub:schedule");

/** The `schedules` folder of a Bub home. */
export function schedulesDir(home: string): string {
  return join(home, "schedules");
}

function isMissing(error: unknown): boolean {
  return errorCode(error) === "ENOENT";
}

/** Writes `data` as JSON to `path` through a temporary file renamed over it. */
async function writeJsonAtomic(path: string, data: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}-${randomBytes(3).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** The schedules of one Bub home (see the module comment). */
export class ScheduleStore {
  /** `<home>/schedules`. */
  readonly dir: string;
  /** `<home>/schedules/jobs`: one `<id>.json` per job. */
  readonly jobsDir: string;
  /** `<home>/schedules/state`: one `<id>.json` per job that has run. */
  readonly stateDir: string;

  constructor(home: string) {
    this.dir = schedulesDir(home);
    this.jobsDir = join(this.dir, "jobs");
    this.stateDir = join(this.dir, "state");
  }

  /** Creates the folders (private to the user: prompts may be personal). */
  async prepare(): Promise<void> {
    await mkdir(this.jobsDir, { recursive: true, mode: 0o700 });
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
  }

  /** Stores a new job. */
  async add(job: ScheduleJob): Promise<void> {
    await this.prepare();
    await writeJsonAtomic(join(this.jobsDir, `${job.id}.json`), job);
  }

  /** Deletes a job and its run state; false when there was no such job. */
  async remove(id: string): Promise<boolean> {
    if (!isJobId(id)) return false;
    const existed = await rm(join(this.jobsDir, `${id}.json`)).then(
      () => true,
      (error: unknown) => {
        if (isMissing(error)) return false;
        throw error;
      },
    );
    await rm(join(this.stateDir, `${id}.json`), { force: true });
    return existed;
  }

  /** The ids of the stored jobs, sorted. */
  async ids(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.jobsDir);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    return names
      .filter((name) => name.endsWith(".json"))
      .map((name) => name.slice(0, -".json".length))
      .filter(isJobId)
      .sort();
  }

  /** One job, or null when it is gone or unreadable (an unreadable file is logged). */
  async get(id: string): Promise<ScheduleJob | null> {
    if (!isJobId(id)) return null;
    const path = join(this.jobsDir, `${id}.json`);
    let raw: string;
    try {
      raw = await readBoundedTextFile(path, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "the schedule job", tooLargeFix: "delete the file" });
    } catch (error) {
      if (isMissing(error)) return null;
      if (error instanceof FileRefusedError) {
        log.warn(`schedule.skip ${error.message}`);
        return null;
      }
      throw error;
    }
    try {
      const job = parseJob(JSON.parse(raw));
      if (job.id !== id) throw new Error(`its id is ${job.id}`);
      return job;
    } catch (error) {
      log.warn(`schedule.skip ${path} is not a schedule (${error instanceof Error ? error.message : String(error)}); fix or delete the file`);
      return null;
    }
  }

  /** Every readable job, in id order. */
  async list(): Promise<ScheduleJob[]> {
    const jobs = await Promise.all((await this.ids()).map((id) => this.get(id)));
    return jobs.filter((job) => job !== null);
  }

  /** A job's last run, or null when it has not run. */
  async runState(id: string): Promise<ScheduleRunState | null> {
    try {
      const path = join(this.stateDir, `${id}.json`);
      return parseRunState(JSON.parse(await readBoundedTextFile(path, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "the schedule run state" })));
    } catch {
      return null;
    }
  }

  /** Records a run: its scheduled time and when it was fired. */
  async recordRun(id: string, scheduledFor: Date, firedAt: Date): Promise<void> {
    await writeJsonAtomic(join(this.stateDir, `${id}.json`), { last_run_at: scheduledFor.toISOString(), fired_at: firedAt.toISOString() });
  }
}
