/**
 * SIGINT / SIGTERM to the installed `bub run` (or a `bub chat` turn) while a tool or the model call runs: the turn
 * is aborted, the tool's process group is killed, the user message and an `interrupted`
 * event are on the tape, one line is printed on stderr, and bub exits 130 / 143.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { processesGone, processesStarted, uniqueSeconds } from "../support/processes.ts";
import { installedPackage, tempHome } from "./support/installed.ts";
import { onlyTape, startBub, type TapeEntry } from "./support/live.ts";

function interruptedEvents(entries: TapeEntry[]): TapeEntry[] {
  return entries.filter((entry) => entry.kind === "event" && entry.payload.name === "interrupted");
}

describe("interrupting bub run and bub chat", () => {
  let server: FakeOpenAI;
  before(async () => {
    await installedPackage();
    server = await startFakeOpenAI();
  });
  after(() => server.close());

  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it(`${signal} while bash runs kills its process group, saves the turn and exits ${code}`, async () => {
      const home = await tempHome();
      const seconds = uniqueSeconds();
      const bub = await startBub(["run", "sleep for a while"], {
        home: home.path,
        env: { BUB_HOME: `${home.path}/.bub`, BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test" },
      });
      try {
        server.script(reply.toolCalls([{ id: "call_sleep", name: "bash", arguments: JSON.stringify({ cmd: `sleep ${seconds}` }) }]));
        await processesStarted(`sleep ${seconds}`, 15_000);
        const sent = Date.now();
        bub.child.kill(signal);
        const result = await bub.exited(10_000);
        const elapsed = Date.now() - sent;
        assert.equal(result.code, code, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
        assert.ok(elapsed < 5_000, `exited ${elapsed} ms after the signal`);
        assert.equal(result.stderr, `bub: interrupted (${signal}) — the turn was saved to the tape\n`);
        assert.equal(result.stdout, "");
        assert.deepEqual(await processesGone(seconds), [], "the command's processes are gone");

        const entries = await onlyTape(`${home.path}/.bub`);
        assert.deepEqual(entries.map((entry) => entry.id), entries.map((_entry, index) => index + 1), "ids count from 1 without gaps");
        const user = entries.filter((entry) => entry.kind === "message" && entry.payload.role === "user");
        assert.equal(user.length, 1, "the user message is on the tape once");
        assert.match(String(user[0]!.payload.content), /sleep for a while$/);
        const events = interruptedEvents(entries);
        assert.equal(events.length, 1);
        assert.equal((events[0]!.payload.data as Record<string, unknown>).signal, signal);
        assert.ok(entries.indexOf(events[0]!) > entries.indexOf(user[0]!), "the interrupted event follows the user message");
      } finally {
        bub.kill();
        await home.cleanup();
      }
    });
  }

  it("SIGINT while the model call runs aborts it and saves the turn", async () => {
    const home = await tempHome();
    const bub = await startBub(["run", "hello there"], {
      home: home.path,
      env: { BUB_HOME: `${home.path}/.bub`, BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test" },
    });
    try {
      const index = server.requests.length;
      server.script(reply.hang());
      await server.waitForRequest(index);
      bub.child.kill("SIGINT");
      const result = await bub.exited(10_000);
      assert.equal(result.code, 130, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.equal(result.stderr, "bub: interrupted (SIGINT) — the turn was saved to the tape\n");
      const entries = await onlyTape(`${home.path}/.bub`);
      assert.ok(entries.some((entry) => entry.kind === "message" && entry.payload.role === "user" && String(entry.payload.content).endsWith("hello there")));
      assert.equal(interruptedEvents(entries).length, 1);
    } finally {
      bub.kill();
      await home.cleanup();
    }
  });

  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it(`${signal} during a bub chat turn (piped stdin) stops the turn, saves it and exits ${code}`, async () => {
      const home = await tempHome();
      const seconds = uniqueSeconds();
      const bub = await startBub(["chat"], {
        home: home.path,
        env: { BUB_HOME: `${home.path}/.bub`, BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test" },
      });
      try {
        server.script(reply.toolCalls([{ id: "call_chat_sleep", name: "bash", arguments: JSON.stringify({ cmd: `sleep ${seconds}` }) }]));
        bub.child.stdin.write("nap in the chat\n");
        await processesStarted(`sleep ${seconds}`, 15_000);
        const sent = Date.now();
        bub.child.kill(signal);
        const result = await bub.exited(10_000);
        assert.equal(result.code, code, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
        assert.ok(Date.now() - sent < 5_000, "exits within a few seconds");
        assert.doesNotMatch(result.stdout, /An error occurred/, "the interrupt is reported once, on stderr");
        assert.match(result.stdout, /Bye\.\n$/);
        assert.equal(result.stderr, `bub: interrupted (${signal}) — the turn was saved to the tape\n`);
        assert.deepEqual(await processesGone(seconds), [], "the command's processes are gone");
        const entries = await onlyTape(`${home.path}/.bub`);
        const user = entries.filter((entry) => entry.kind === "message" && entry.payload.role === "user");
        assert.equal(user.length, 1);
        assert.match(String(user[0]!.payload.content), /nap in the chat$/);
        const events = interruptedEvents(entries);
        assert.equal(events.length, 1);
        assert.equal((events[0]!.payload.data as Record<string, unknown>).signal, signal);
      } finally {
        bub.kill();
        await home.cleanup();
      }
    });
  }

  it("a second signal exits at once, even while a tool ignores SIGTERM", async () => {
    const home = await tempHome();
    const seconds = uniqueSeconds();
    const bub = await startBub(["run", "be stubborn"], {
      home: home.path,
      env: { BUB_HOME: `${home.path}/.bub`, BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test" },
    });
    try {
      server.script(reply.toolCalls([{ id: "call_trap", name: "bash", arguments: JSON.stringify({ cmd: `trap '' TERM; sleep ${seconds} & wait` }) }]));
      await processesStarted(`sleep ${seconds}`, 15_000);
      bub.child.kill("SIGINT");
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sent = Date.now();
      bub.child.kill("SIGINT");
      const result = await bub.exited(10_000);
      assert.equal(result.code, 130, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.ok(Date.now() - sent < 2_000, "the second signal does not wait for the tool's grace period");
      assert.deepEqual(await processesGone(seconds), [], "the command's processes are gone");
    } finally {
      bub.kill();
      await home.cleanup();
    }
  });
});
