/**
 * A model server that accepts the request and never answers: the installed `bub run` gives
 * up after BUB_MODEL_IDLE_TIMEOUT_SECONDS with a timeout error, and a fallback model answers
 * when one is configured. One that streams without end, never idle, is cut off by the total
 * bound BUB_MODEL_TIMEOUT_SECONDS (10 minutes by default; `0` turns it off).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { onlyTape } from "./support/live.ts";

describe("a model that never answers", () => {
  let server: FakeOpenAI;
  before(async () => {
    await installedPackage();
    server = await startFakeOpenAI();
  });
  after(() => server.close());

  it("fails bub run within the idle timeout with a timeout error on stderr, exit 1, and a consistent tape", async () => {
    const home = await tempHome();
    try {
      server.script(reply.hang());
      const started = Date.now();
      const result = await runBub(["run", "hello"], {
        home: home.path,
        env: { BUB_HOME: `${home.path}/.bub`, BUB_MODEL: "local:slow", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_MODEL_IDLE_TIMEOUT_SECONDS: "2" },
      });
      const elapsed = Date.now() - started;
      assert.equal(result.code, 1, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.ok(elapsed < 15_000, `gave up after ${elapsed} ms`);
      assert.match(result.stderr, /timeout|timed out|sent nothing/i);
      assert.match(result.stderr, /local:slow/);
      assert.match(result.stderr, /BUB_MODEL_IDLE_TIMEOUT_SECONDS/);
      const entries = await onlyTape(`${home.path}/.bub`);
      assert.deepEqual(entries.map((entry) => entry.id), entries.map((_entry, index) => index + 1), "ids count from 1 without gaps");
      assert.ok(entries.some((entry) => entry.kind === "message" && entry.payload.role === "user"), "the user message is on the tape");
    } finally {
      await home.cleanup();
    }
  });

  it("answers from the fallback model after the timeout", async () => {
    const home = await tempHome();
    try {
      server.script(reply.hang(), reply.text("Fallback here."));
      const result = await runBub(["run", "hello"], {
        home: home.path,
        env: {
          BUB_HOME: `${home.path}/.bub`,
          BUB_MODEL: "local:slow",
          BUB_FALLBACK_MODELS: "local:steady",
          BUB_API_BASE: server.url,
          BUB_API_KEY: "sk-test",
          BUB_MODEL_IDLE_TIMEOUT_SECONDS: "2",
        },
      });
      assert.equal(result.code, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.equal(result.stdout, "[cli:local]\nFallback here.\n");
      assert.deepEqual(server.requests.slice(-2).map((request) => request.body.model), ["slow", "steady"]);
    } finally {
      await home.cleanup();
    }
  });

  it("ends a stream that never ends but is never idle after BUB_MODEL_TIMEOUT_SECONDS, with one error line naming it and a consistent tape", async () => {
    const home = await tempHome();
    try {
      server.script(reply.trickle(100));
      const result = await runBub(["run", "hello"], {
        home: home.path,
        env: { BUB_HOME: `${home.path}/.bub`, BUB_MODEL: "local:endless", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_MODEL_TIMEOUT_SECONDS: "2" },
      });
      assert.equal(result.code, 1, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.match(result.stderr, /local:endless did not finish within 2 s \(BUB_MODEL_TIMEOUT_SECONDS\); the call was aborted\./);
      assert.equal(server.requests.filter((request) => request.body.model === "endless").length, 1, "a stream that already sent text is not retried");
      const entries = await onlyTape(`${home.path}/.bub`);
      assert.deepEqual(entries.map((entry) => entry.id), entries.map((_entry, index) => index + 1), "ids count from 1 without gaps");
      assert.ok(entries.some((entry) => entry.kind === "message" && entry.payload.role === "user"), "the user message is on the tape");
      assert.ok(JSON.stringify(entries).includes("BUB_MODEL_TIMEOUT_SECONDS"), "the failure is on the tape");
    } finally {
      await home.cleanup();
    }
  });

  it("accepts BUB_MODEL_TIMEOUT_SECONDS=0 as no total bound", async () => {
    const home = await tempHome();
    try {
      server.script(reply.trickle(20, "tick ", { chunks: 5 }));
      const result = await runBub(["run", "hello"], {
        home: home.path,
        env: { BUB_HOME: `${home.path}/.bub`, BUB_MODEL: "local:steady", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_MODEL_TIMEOUT_SECONDS: "0" },
      });
      assert.equal(result.code, 0, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.equal(result.stdout, "[cli:local]\ntick tick tick tick tick \n");
    } finally {
      await home.cleanup();
    }
  });
});
