/**
 * A turn is cancelled through the signal in its hooks' arguments: a plugin's model that
 * waits on it sees the abort when the turn is quit, when a gateway's shutdown grace runs
 * out, and when the chat is left (`,quit`) or interrupted (Ctrl-C) during a turn.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import type { StreamEvent } from "../../src/kernel/stream.ts";
import { setLogSink, type LogLevel } from "../../src/kernel/log.ts";
import { eventually } from "../support/eventually.ts";
import { captureLogs } from "../support/temp.ts";
import { chatSession } from "./cli/support.ts";
import { admissionPlugin, deferred, message, running } from "./support.ts";

const text = (delta: string): StreamEvent => ({ kind: "text", data: { delta } });

/** What each hook of the turn was handed as `signal`, and how the waiting model ended. */
interface Observed {
  signals: Map<string, AbortSignal | undefined>;
  modelStarted: ReturnType<typeof deferred>;
  /** Settles with the abort reason the model saw. */
  modelAborted: ReturnType<typeof deferred<unknown>>;
  saveError: unknown;
}

/** A plugin whose `runModel` answers only when its turn's signal aborts, by rejecting with its reason. */
function waitingModel(): { plugin: BubPlugin; observed: Observed } {
  const observed: Observed = { signals: new Map(), modelStarted: deferred(), modelAborted: deferred<unknown>(), saveError: undefined };
  const plugin: BubPlugin = {
    name: "waiting-model",
    loadState: ({ sessionId, signal }) => (observed.signals.set("loadState", signal), { session_id: sessionId }),
    buildPrompt: ({ message: inbound, signal }) => (observed.signals.set("buildPrompt", signal), String((inbound as { content?: unknown }).content)),
    runModel: ({ signal }) => {
      observed.signals.set("runModel", signal);
      observed.modelStarted.resolve(undefined);
      return new Promise<string>((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          observed.modelAborted.resolve(signal.reason);
          reject(signal.reason);
        }, { once: true });
      });
    },
    saveState: ({ signal, error }) => {
      observed.signals.set("saveState", signal);
      observed.saveError = error;
    },
  };
  return { plugin, observed };
}

/** Every turn hook got one and the same signal, now aborted. */
function assertOneAbortedSignal(observed: Observed): void {
  const signals = [...observed.signals.values()];
  assert.deepEqual([...observed.signals.keys()].sort(), ["buildPrompt", "loadState", "runModel", "saveState"]);
  assert.ok(signals.every((signal) => signal === signals[0]), "every hook of the turn gets the same signal");
  assert.equal(signals[0]?.aborted, true);
}

describe("cancellation through the hook arguments' signal", () => {
  it("quit aborts the running turn: the waiting model sees it, saveState gets its reason", async () => {
    const { plugin, observed } = waitingModel();
    const { manager, stop, done } = await running([plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    await manager.handleMessage(message("long"));
    await observed.modelStarted.promise;
    assert.equal(observed.signals.get("runModel")?.aborted, false, "not aborted before anyone cancels");
    await manager.handleMessage(message("queued"));
    await captureLogs(async () => {
      await manager.quit("test:1");
      const reason = await observed.modelAborted.promise;
      assert.match(String(reason), /turn cancelled/);
      await manager.idle();
    });
    assertOneAbortedSignal(observed);
    const reason = observed.signals.get("runModel")?.reason;
    const failure = observed.saveError as { cause?: unknown } | undefined;
    assert.ok(failure === reason || failure?.cause === reason, "the turn fails with the abort reason");
    stop.abort();
    await done;
  });

  it("a gateway's shutdown aborts a turn still running when the grace period ends, not before", async () => {
    const { plugin, observed } = waitingModel();
    const { manager, channel, stop, done } = await running([plugin], { graceSeconds: 0.1 });
    await manager.handleMessage(message("stuck"));
    await observed.modelStarted.promise;
    const { logs } = await captureLogs(async () => {
      const started = Date.now();
      stop.abort();
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(observed.signals.get("runModel")?.aborted, false, "the turn runs on during the grace period");
      await observed.modelAborted.promise;
      assert.ok(Date.now() - started >= 90, "aborted once the grace period is over");
      await done;
    });
    assertOneAbortedSignal(observed);
    assert.ok(logs.some((log) => /cancelled 1 in-flight tasks/.test(log.message)));
    assert.deepEqual(channel.events, ["start", "stop"]);
  });

  it("a turn the shutdown cancels is logged as turn.cancelled at info, not as a failed turn", async () => {
    const { plugin, observed } = waitingModel();
    const { manager, stop, done } = await running([plugin], { graceSeconds: 0 });
    await manager.handleMessage(message("stuck"));
    await observed.modelStarted.promise;
    const logs: { level: LogLevel; message: string }[] = [];
    const restore = setLogSink((level, _namespace, text) => logs.push({ level, message: text }));
    try {
      stop.abort();
      await done;
      // The turn's own pipeline ends after the manager stopped waiting for it.
      await eventually(() => logs.find((log) => /^turn\.(cancelled|failed) /.test(log.message)), "the turn's end in the log");
    } finally {
      restore();
    }
    const ends = logs.filter((log) => /^turn\.(cancelled|failed) /.test(log.message));
    assert.deepEqual(ends.map((log) => [log.level, log.message.replace(/turn_id=\S+/, "turn_id=…")]), [["info", "turn.cancelled session_id=test:1 turn_id=…"]]);
    assert.ok(!logs.some((log) => log.level === "error"), "nothing logged as an error");
  });

  for (const [how, keys] of [
    ["Ctrl-C", ["\x03"]],
    ["`,quit`", [",quit\r"]],
  ] as const) {
    it(`leaving \`bub chat\` during a turn (${how}) aborts the turn's signal`, async () => {
      const started = deferred();
      const aborted = deferred<unknown>();
      let seen: AbortSignal | null = null;
      const session = await chatSession(
        async function* (prompt, _state, signal) {
          if (prompt !== "wait") {
            yield text(`got ${prompt}`);
            return;
          }
          seen = signal;
          started.resolve();
          // Waits on the signal only: the turn ends when (and because) it aborts.
          await new Promise<void>((_resolve, reject) => signal.addEventListener("abort", () => (aborted.resolve(signal.reason), reject(signal.reason)), { once: true }));
        },
        { tty: true },
      );
      const { terminal } = session;
      await terminal.waitFor("demo-ws > ");
      terminal.input.write("wait\r");
      await started.promise;
      for (const key of keys) terminal.input.write(key);
      await aborted.promise;
      assert.equal((seen as AbortSignal | null)?.aborted, true);
      if (how === "Ctrl-C") {
        await terminal.waitFor("Interrupted.");
        await session.channel.whenIdle();
        terminal.input.write("\x03");
      }
      await session.running;
      assert.match(terminal.text(), /Bye\./);
    });
  }
});
