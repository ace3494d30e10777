// `npm run test:crash`: many crash trials against the file and SQLite stores.
// Usage: node test/tape/support/run-crash-trials.ts [trials=100] [seed]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCrashTrials } from "./crash-harness.ts";

const trials = Number(process.argv[2] ?? 100);
const seed = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
let failed = false;
for (const store of ["file", "sqlite"] as const) {
  const directory = mkdtempSync(join(tmpdir(), `bub-crash-${store}-`));
  const started = performance.now();
  try {
    const report = await runCrashTrials({ store, trials, directory, seed });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`${store}: ${report.trials} trials passed in ${seconds} s (seed ${report.seed}): ${report.acknowledged} acknowledged appends all present, ${report.entries} entries, ${report.tornLines} torn lines skipped`);
  } catch (error) {
    failed = true;
    console.error(`${store}: FAILED: ${(error as Error).message}`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
process.exitCode = failed ? 1 : 0;
