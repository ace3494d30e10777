/**
 * Runs the end-to-end suite on the packed package: packs the checkout once, installs the
 * tarball into a temporary prefix, then runs every `test/e2e/*.e2e.ts` file against it.
 * Called by `npm test` after the unit tests; `node test/e2e/run.ts [files...]` runs some.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import chromium from "@sparticuz/chromium";
import { packAndInstall } from "./support/installed.ts";

const here = fileURLToPath(new URL(".", import.meta.url));
const dir = await mkdtemp(join(tmpdir(), "bub-e2e-"));
let code = 1;
try {
  const started = Date.now();
  const { prefix, tarball } = await packAndInstall(dir);
  process.stdout.write(`e2e: packed and installed ${tarball} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  // The browser tests' Chromium is unpacked to a fixed path on first use. Two test files
  // unpacking it at once race: one sees the file while the other still writes it, and its
  // launch fails with ETXTBSY. Unpacked here, before any test file runs, it is there whole.
  await chromium.executablePath();
  const files = process.argv.length > 2 ? process.argv.slice(2) : (await readdir(here)).filter((name) => name.endsWith(".e2e.ts")).sort().map((name) => join(here, name));
  code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ["--test", "--test-reporter=spec", "--test-concurrency=2", ...files], { stdio: "inherit", env: { ...process.env, BUB_E2E_PREFIX: prefix } });
    child.on("close", (status) => resolve(status ?? 1));
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = code;
