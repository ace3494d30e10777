/**
 * Files bub reads on its own, on the installed binary (docs/security.md, *Limits*): an
 * AGENTS.md of 64 MB, one that links to `/dev/zero` or is a FIFO, a workspace package.json
 * that links to `/dev/zero`, a `config.yml` or `.env` that is a FIFO. Each `bub` command ends
 * (a kill timeout turns a hang into a failure) with one line naming the file and what is
 * wrong, and nothing of the file reaches the model.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome, type BubResult } from "./support/installed.ts";

const mkfifo = (path: string) => promisify(execFile)("mkfifo", [path]);

/** A hang (a FIFO waited on, /dev/zero read for ever) is killed after this long and fails the test. */
const KILL_AFTER_MS = 20_000;

describe("files bub reads on its own are bounded and must be regular files (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let workspace: string;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    home = await tempHome();
    workspace = join(home.path, "project");
    await mkdir(workspace);
    // BUB_LOG_LEVEL lets a turn's warnings reach stderr in `bub run` too.
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_LOCAL_API_BASE: openai.url, BUB_LOG_LEVEL: "warn" };
  });
  afterEach(async () => {
    await home.cleanup();
  });

  const run = (args: string[]): Promise<BubResult> => runBub(args, { home: home.path, cwd: workspace, env, timeoutMs: KILL_AFTER_MS });

  /** `bub run "hi"` answered without the file: exit 0, the answer, one stderr line matching `line`. */
  async function answersWithoutIt(line: RegExp): Promise<void> {
    openai.script(reply.text("hello"));
    const result = await run(["run", "hi"]);
    assert.equal(result.signal, null, `bub was killed after ${KILL_AFTER_MS} ms (it hung); stderr: ${result.stderr.slice(0, 500)}`);
    assert.equal(result.code, 0, result.stderr.slice(0, 500));
    assert.equal(openai.requests.length, 1);
    const size = JSON.stringify(openai.requests[0]!.body).length;
    assert.ok(size < 64 * 1024, `the model request is ${size} bytes`);
    assert.match(result.stdout, /^\[cli:local\]\nhello\n$/);
    const lines = result.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, `one line on stderr, got: ${result.stderr.slice(0, 1000)}`);
    assert.match(lines[0]!, line);
  }

  it("an AGENTS.md of 64 MB stays out of the model request, with one warning naming its size and the bound", async () => {
    await writeFile(join(workspace, "AGENTS.md"), Buffer.alloc(64 * 1024 * 1024, "rules "));
    await answersWithoutIt(/AGENTS\.md at \S+project\/AGENTS\.md is 64 MiB, over the 256 KiB bound for AGENTS\.md — shorten it or raise BUB_AGENTS_MAX_BYTES/);
    const log = await readFile(join(home.path, ".bub", "logs", "bub.log"), "utf8");
    assert.equal(log.match(/agents_md\.skipped/g)?.length, 1, "logged once");
  });

  it("an AGENTS.md that links to /dev/zero is refused as a device before a byte is read", async () => {
    await symlink("/dev/zero", join(workspace, "AGENTS.md"));
    await answersWithoutIt(/AGENTS\.md at \S+ is not a regular file \(a character device\) — replace it with a regular file or remove it/);
  });

  it("an AGENTS.md that is a FIFO does not block the turn", async () => {
    await mkfifo(join(workspace, "AGENTS.md"));
    await answersWithoutIt(/AGENTS\.md at \S+ is not a regular file \(a FIFO\) — replace it with a regular file or remove it/);
  });

  it("a workspace package.json that links to /dev/zero is refused before any trust decision, and the turn runs", async () => {
    await symlink("/dev/zero", join(workspace, "package.json"));
    await answersWithoutIt(/package\.json at \S+project\/package\.json is not a regular file \(a character device\) — replace it with a regular file or remove it/);
  });

  it("a config.yml that is a FIFO stops the command with one line instead of hanging it", async () => {
    await mkdir(env.BUB_HOME!);
    await mkfifo(join(env.BUB_HOME!, "config.yml"));
    const result = await run(["run", "hi"]);
    assert.equal(result.signal, null, `bub was killed after ${KILL_AFTER_MS} ms (it hung)`);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.equal(result.stderr, `bub: config.yml at ${join(env.BUB_HOME!, "config.yml")} is not a regular file (a FIFO) — replace it with a regular file or remove it\n`);
    assert.equal(openai.requests.length, 0);
  });

  it("`bub trust` of a folder whose .env is a FIFO says so in one line instead of hanging", async () => {
    await mkfifo(join(workspace, ".env"));
    const result = await run(["trust"]);
    assert.equal(result.signal, null, `bub was killed after ${KILL_AFTER_MS} ms (it hung)`);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^bub: the \.env file at \S+project\/\.env is not a regular file \(a FIFO\) — replace it with a regular file or remove it\n$/);
  });
});
