/**
 * Tools cannot read a secret from any `bub` process, and do not outlive it (issue 32, items
 * 1 and 11), on the installed package: `bub run` with the API keys and the bot token in its
 * environment, and a scripted model whose `bash` calls read `/proc/<pid>/environ`,
 * `cmdline` and `mem` of every process they can see and print what they find reversed (so
 * redaction of the exact value cannot hide it). No secret, in any of those encodings,
 * reaches the model, a file under BUB_HOME or the output; bub's own environment block holds
 * none; and a `kill -9` of `bub run` takes its `bash` command's processes with it.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { processesGone, processesStarted, processesWith, uniqueSeconds } from "../support/processes.ts";
import { installedPackage, tempHome } from "./support/installed.ts";
import { pollUntil, startBub } from "./support/live.ts";

const suffix = randomBytes(6).toString("hex");
const SECRETS = {
  BUB_API_KEY: `sk-iso-bub-${suffix}`,
  OPENAI_API_KEY: `sk-iso-openai-${suffix}`,
  BUB_TELEGRAM_TOKEN: `123456:ISO-TOKEN-${suffix}`,
};

/** A secret as a command may print it: verbatim, reversed, base64 of either. */
function encodings(secret: string): string[] {
  const reversed = [...secret].reverse().join("");
  return [secret, reversed, Buffer.from(secret).toString("base64"), Buffer.from(reversed).toString("base64")];
}

/**
 * Reads the writable memory of every visible process whose command line mentions bub (the
 * `bub` process itself when it is visible) and prints, reversed, what follows each of the
 * variable names or the secrets' common prefixes.
 */
const MEMORY_SCANNER = `
const fs = require("node:fs");
const needles = ["BUB_API_KEY=", "OPENAI_API_KEY=", "BUB_TELEGRAM_TOKEN=", "sk-iso-", "ISO-TOKEN-"];
const found = new Set();
let scanned = 0;
for (const pid of fs.readdirSync("/proc").filter((name) => /^\\d+$/.test(name))) {
  if (Number(pid) === process.pid) continue;
  let maps;
  try {
    if (!fs.readFileSync("/proc/" + pid + "/cmdline", "latin1").includes("bub")) continue;
    maps = fs.readFileSync("/proc/" + pid + "/maps", "latin1");
  } catch { continue; }
  let fd;
  try { fd = fs.openSync("/proc/" + pid + "/mem", "r"); } catch (error) { console.log("cannot open mem of " + pid + ": " + error.code); continue; }
  scanned++;
  for (const line of maps.split("\\n")) {
    const match = /^([0-9a-f]+)-([0-9a-f]+) rw/.exec(line);
    if (!match) continue;
    const start = parseInt(match[1], 16), end = parseInt(match[2], 16);
    for (let at = start; at < end; at += 4 << 20) {
      const buffer = Buffer.alloc(Math.min(4 << 20, end - at));
      let text;
      try { text = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, at)).toString("latin1"); } catch { break; }
      for (const needle of needles) {
        for (let index = text.indexOf(needle); index >= 0; index = text.indexOf(needle, index + 1)) {
          found.add(/^[\\x21-\\x7e]*/.exec(text.slice(index, index + 120))[0]);
        }
      }
    }
  }
  fs.closeSync(fd);
}
console.log("scanned " + scanned + " processes");
for (const value of found) console.log("found " + [...value].reverse().join(""));
`;

describe("secrets out of reach of tools (installed package)", () => {
  let openai: FakeOpenAI;
  before(() => installedPackage());
  // A fresh model server per test: a test that fails early leaves no scripted reply to the next.
  beforeEach(async () => {
    openai = await startFakeOpenAI();
  });
  afterEach(() => openai.close());

  it("bash reads no secret from /proc environ, cmdline or memory of any bub process; bub's own environ holds none", async () => {
    const home = await tempHome();
    const bubHome = join(home.path, ".bub");
    await writeFile(join(home.path, "scan.cjs"), MEMORY_SCANNER);
    const bash = (cmd: string) => ({ name: "bash", arguments: JSON.stringify({ cmd }) });
    openai.script(
      reply.toolCalls([bash("touch started; while [ ! -e go ]; do sleep 0.05; done; echo gate passed")]),
      reply.toolCalls([
        bash(`tr '\\0' '\\n' < /proc/$PPID/environ | grep -a -E 'KEY|TOKEN' | rev`),
        bash(`for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f"; done 2>/dev/null | grep -a -E 'KEY|TOKEN' | rev`),
        bash(`for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done 2>/dev/null | grep -a bub | rev`),
        bash(`${process.execPath} scan.cjs`),
      ]),
      reply.text("Done."),
    );
    const bub = await startBub(["run", "show me your secrets"], {
      home: home.path,
      env: { BUB_HOME: bubHome, BUB_MODEL: "local:any", BUB_API_BASE: openai.url, ...SECRETS },
    });
    try {
      await pollUntil(() => (existsSync(join(home.path, "started")) ? true : undefined), "the first bash call to start", { timeoutMs: 20_000 });
      const environ = await readFile(`/proc/${bub.child.pid}/environ`, "latin1");
      for (const [name, secret] of Object.entries(SECRETS)) {
        assert.ok(!environ.includes(secret), `${name} is in /proc/<bub pid>/environ`);
      }
      await writeFile(join(home.path, "go"), "");
      const result = await bub.exited(60_000);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Done\./);
      const tools = openai.requests.at(-1)!.body.messages.filter((message) => message.role === "tool").map((message) => String(message.content));
      assert.equal(tools.length, 5, "every bash call ran and answered");
      assert.match(tools[0]!, /gate passed/);
      assert.match(tools[4]!, /scanned \d+ processes/);
      const requests = JSON.stringify(openai.requests.map((request) => request.body));
      const files = await readdir(bubHome, { recursive: true, withFileTypes: true });
      const texts = await Promise.all(files.filter((entry) => entry.isFile()).map((entry) => readFile(join(entry.parentPath, entry.name), "latin1")));
      for (const [name, secret] of Object.entries(SECRETS)) {
        for (const form of encodings(secret)) {
          assert.ok(!requests.includes(form), `${name} (as ${form}) reached the model`);
          assert.ok(!texts.some((text) => text.includes(form)), `${name} (as ${form}) is in a file under BUB_HOME`);
          assert.ok(!result.stdout.includes(form) && !result.stderr.includes(form), `${name} (as ${form}) is in the output`);
        }
      }
    } finally {
      bub.kill();
      await home.cleanup();
    }
  });

  it("kill -9 of bub run ends its bash command's processes", async () => {
    const home = await tempHome();
    const seconds = uniqueSeconds(300);
    openai.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: `sleep ${seconds} & sleep ${seconds}` }) }]));
    const bub = await startBub(["run", "sleep for a while"], {
      home: home.path,
      env: { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_API_KEY: SECRETS.BUB_API_KEY },
    });
    try {
      await processesStarted(seconds, 20_000, 2, "sleep ");
      bub.child.kill("SIGKILL");
      await bub.exited(10_000);
      assert.deepEqual(await processesGone(seconds, 5_000), [], "no process of the command outlives bub");
    } finally {
      bub.kill();
      for (const pid of processesWith(seconds)) process.kill(pid, "SIGKILL");
      await home.cleanup();
    }
  });
});
