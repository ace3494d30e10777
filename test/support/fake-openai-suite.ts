/**
 * One fake OpenAI-compatible server for a whole `describe()` block: started before its
 * tests, closed after them, with the request log cleared before each test and a check that
 * the previous test consumed everything it scripted. Log records go to `onLog` (default:
 * dropped) while the block runs.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach } from "node:test";
import { setLogSink, type LogSink } from "../../src/kernel/log.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";

/** Registers the hooks and returns the server (usable from the first test on). */
export function useFakeOpenAI(options: { onLog?: LogSink } = {}): FakeOpenAI {
  let server: FakeOpenAI | null = null;
  let restoreLogs: () => void = () => undefined;
  const current = (): FakeOpenAI => {
    if (!server) throw new Error("the fake OpenAI server is used before its describe() block started it");
    return server;
  };
  before(async () => {
    server = await startFakeOpenAI();
    restoreLogs = setLogSink(options.onLog ?? (() => undefined));
  });
  after(async () => {
    restoreLogs();
    await server?.close();
  });
  beforeEach(() => {
    assert.equal(current().pending(), 0, "the previous test consumed its script");
    current().requests.length = 0;
  });
  return {
    get url() {
      return current().url;
    },
    get requests() {
      return current().requests;
    },
    get connections() {
      return current().connections;
    },
    script: (...replies) => current().script(...replies),
    pending: () => current().pending(),
    waitForRequest: (index) => current().waitForRequest(index),
    close: () => current().close(),
  };
}
