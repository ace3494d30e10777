/**
 * What the installed `bub` prints never shows a configured secret or replays a terminal
 * escape sequence: `bub run` (JSON and plain, stdout and stderr) redacts a provider's 401
 * that quotes the key and a key the model streams back in pieces; `bub tape show`, `bub tape
 * export` (every format) and `bub ui` redact, with today's secrets, a tape written before the
 * key was configured; `bub tape show`, the Markdown export and `bub chat` show a tool's
 * escape codes (an OSC 52 clipboard write, a screen clear) as visible text.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { cleanEnv, installedPackage, runBub, tempHome } from "./support/installed.ts";

const KEY = "sk-e2e-redact-0123456789abcdef";
/** An OSC 52 clipboard write, then a screen clear, as a hostile file or command would print them. */
const ESCAPES = "\x1b]52;c;aGVsbG8=\x07\x1b[2J";
const RAW_CONTROL = /[\x07\x1b]/;
/** The key's marker: named after the setting that holds it (`api_key`, which BUB_API_KEY sets too). */
const MARKER = /\[redacted:(?:api_key|BUB_API_KEY)\]/;

type Home = Awaited<ReturnType<typeof tempHome>>;

describe("bub run prints no secret, in any form (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Home;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    home = await tempHome();
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_API_KEY: KEY };
  });
  afterEach(async () => {
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  it("--json: a provider's 401 quoting the key prints the marker on stdout, and nothing of the key anywhere", async () => {
    openai.script(reply.error(401, `Incorrect API key provided: ${KEY}. You can find your API key at https://example.invalid.`));
    const result = await runBub(["run", "--json", "hello"], { home: home.path, env });
    assert.equal(result.code, 1, result.stderr);
    assert.ok(!result.stdout.includes(KEY), result.stdout);
    assert.ok(!result.stderr.includes(KEY), result.stderr);
    const events = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const error = events.find((event) => event.type === "error");
    assert.ok(error, result.stdout);
    assert.match(String(error.message), new RegExp(`Incorrect API key provided: ${MARKER.source}`));
    assert.equal(events.at(-1)?.type, "final");
  });

  it("plain: the same 401 leaves the key out of stdout and stderr", async () => {
    openai.script(reply.error(401, `Incorrect API key provided: ${KEY}.`));
    const result = await runBub(["run", "hello"], { home: home.path, env });
    assert.equal(result.code, 1, result.stderr);
    assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY), `${result.stdout}${result.stderr}`);
    assert.match(result.stderr, MARKER);
  });

  it("--json: a key the model streams back split over several deltas is redacted, the rest of the text kept", async () => {
    openai.script(reply.text(["Your key is ", KEY.slice(0, 9), KEY.slice(9, 20), KEY.slice(20), ", keep it safe."]));
    const result = await runBub(["run", "--json", "what is my key?"], { home: home.path, env });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes(KEY), result.stdout);
    const events = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const streamed = events.filter((event) => event.type === "text").map((event) => String(event.delta)).join("");
    const expected = new RegExp(`^Your key is ${MARKER.source}, keep it safe\\.$`);
    assert.match(streamed, expected);
    assert.ok(!streamed.includes(KEY.slice(9, 20)), "no piece of the key either");
    assert.match(String(events.at(-1)?.text), expected);
  });

  it("plain: an answer quoting the key prints the marker", async () => {
    openai.script(reply.text(`Your key is ${KEY}.`));
    const result = await runBub(["run", "what is my key?"], { home: home.path, env });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes(KEY), result.stdout);
    assert.match(result.stdout, new RegExp(`Your key is ${MARKER.source}\\.`));
  });
});

/** Starts the installed `bub ui --port 0` and resolves with its base URL and token. */
async function startUi(home: string, env: Record<string, string>): Promise<{ child: ChildProcess; base: string; token: string }> {
  const { bin } = await installedPackage();
  const child = spawn(bin, ["ui", "--port", "0"], { cwd: home, env: cleanEnv(home, env), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bub ui printed no URL in 15 s: ${output}`)), 15_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      const found = /bub ui: (http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve({ child, base: found[1]!, token: found[2]! });
      }
    });
    child.once("exit", (code) => reject(new Error(`bub ui exited (${code}): ${output}`)));
  });
}

describe("reading an old tape with today's secrets, and its escape codes (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Home;
  let env: Record<string, string>;
  let tape: string;

  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
    home = await tempHome();
    const bubHome = join(home.path, ".bub");
    env = { BUB_HOME: bubHome, BUB_MODEL: "local:any", BUB_LOCAL_API_BASE: openai.url };
    openai.script(
      reply.toolCalls([{ id: "call_esc", name: "bash", arguments: JSON.stringify({ cmd: "printf 'clipboard\\033]52;c;aGVsbG8=\\007\\033[2Jdone'" }) }]),
      reply.text(`Noted: your key is ${KEY}.`),
    );
    // No secret is configured yet: the tape keeps the key as it was written.
    const run = await runBub(["run", `remember my key ${KEY}`], { home: home.path, env });
    assert.equal(run.code, 0, run.stderr);
    const files = (await readdir(join(bubHome, "tapes"))).filter((name) => name.endsWith(".jsonl") && !name.includes("__sidecar__"));
    const raw = (await Promise.all(files.map((name) => readFile(join(bubHome, "tapes", name), "utf8")))).join("");
    assert.ok(raw.includes(KEY), "the tape was written with the key in it (no secret was configured)");
    assert.ok(raw.includes("\\u001b]52;c;aGVsbG8=\\u0007"), "the tool's escape codes are on the tape");
    // Now the key is configured; every read below uses today's secrets.
    await writeFile(join(bubHome, "config.yml"), `api_key: ${KEY}\n`);
    const list = await runBub(["tape", "list", "--json"], { home: home.path, env });
    tape = String((JSON.parse(list.stdout) as { tape: string }[])[0]!.tape);
  });
  after(async () => {
    await openai.close();
    await home.cleanup();
  });

  it("bub tape show (text and --json) shows the marker where the key was", async () => {
    for (const args of [["tape", "show", "cli:local"], ["tape", "show", "cli:local", "--full"], ["tape", "show", "cli:local", "--json"]]) {
      const result = await runBub(args, { home: home.path, env });
      assert.equal(result.code, 0, result.stderr);
      assert.ok(!result.stdout.includes(KEY), `${args.join(" ")}:\n${result.stdout}`);
      assert.match(result.stdout, /\[redacted:api_key\]/, args.join(" "));
    }
  });

  it("bub tape export (jsonl and markdown) shows the marker where the key was", async () => {
    for (const format of ["jsonl", "markdown", "md"]) {
      const result = await runBub(["tape", "export", "cli:local", "--format", format], { home: home.path, env });
      assert.equal(result.code, 0, result.stderr);
      assert.ok(!result.stdout.includes(KEY), `${format}:\n${result.stdout}`);
      assert.match(result.stdout, /\[redacted:api_key\]/, format);
    }
    const jsonl = await runBub(["tape", "export", "cli:local"], { home: home.path, env });
    for (const line of jsonl.stdout.trimEnd().split("\n")) JSON.parse(line); // still the tape's own JSON lines
  });

  it("bub ui: the sessions list, the session page and a search show no key", async () => {
    const ui = await startUi(home.path, env);
    try {
      const signIn = await fetch(`${ui.base}/?token=${ui.token}`, { redirect: "manual" });
      const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!;
      const get = async (path: string) => {
        const response = await fetch(`${ui.base}${path}`, { headers: { cookie } });
        assert.equal(response.status, 200, path);
        return response.text();
      };
      const sessions = await get("/");
      assert.ok(!sessions.includes(KEY), sessions);
      assert.match(sessions, /\[redacted:api_key\]/, "the newest message, redacted, is the row's preview");
      const page = await get(`/s/${tape}`);
      assert.ok(!page.includes(KEY), page);
      assert.match(page, /\[redacted:api_key\]/);
      const search = await get(`/search?q=${encodeURIComponent(KEY.slice(4, 20))}`);
      assert.ok(!search.includes(KEY.slice(0, 20)), search);
      assert.match(search, /No entry contains/, "a piece of the key finds nothing: what is shown holds the marker");
    } finally {
      const exited = new Promise((resolve) => ui.child.once("exit", resolve));
      ui.child.kill("SIGTERM");
      await exited;
    }
  });

  it("bub tape show and the Markdown export show a tool's escape codes as text, never the codes themselves", async () => {
    for (const args of [["tape", "show", "cli:local"], ["tape", "show", "cli:local", "--full"], ["tape", "export", "cli:local", "--format", "markdown"]]) {
      const result = await runBub(args, { home: home.path, env });
      assert.equal(result.code, 0, result.stderr);
      assert.doesNotMatch(result.stdout, RAW_CONTROL, `${args.join(" ")} wrote a raw ESC or BEL`);
      assert.ok(result.stdout.includes("clipboard\\x1b]52;c;aGVsbG8=\\x07\\x1b[2Jdone"), result.stdout);
    }
  });

  it("--json and the JSONL export keep the tool's output exact", async () => {
    const show = await runBub(["tape", "show", "cli:local", "--json"], { home: home.path, env });
    assert.ok(JSON.stringify(JSON.parse(show.stdout)).includes(JSON.stringify(`clipboard${ESCAPES}done`).slice(1, -1)));
    const jsonl = await runBub(["tape", "export", "cli:local"], { home: home.path, env });
    assert.ok(jsonl.stdout.includes(JSON.stringify(`clipboard${ESCAPES}done`).slice(1, -1)));
  });

  it("bub chat shows a model's escape codes as text", async () => {
    openai.script(reply.text(`Here it is: ${ESCAPES} end.`));
    const result = await runBub(["chat"], { home: home.path, env, input: "show me\n,quit\n" });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, RAW_CONTROL, result.stdout);
    assert.match(result.stdout, /Here it is: \\x1b\]52;c;aGVsbG8=\\x07\\x1b\[2J end\./);
  });
});
