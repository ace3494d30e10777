import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createLogger, setLogSink, type LogSink } from "../../src/kernel/log.ts";
import { kernelFramework } from "../support/framework.ts";

describe("log sinks", () => {
  const log = createLogger("bub:test");

  function collector(): { sink: LogSink; messages: string[] } {
    const messages: string[] = [];
    return { sink: (level, namespace, message) => messages.push(`${level} ${namespace} ${message}`), messages };
  }

  it("sends what each framework's scopes log to that framework's sink, the rest to the process-wide one", async () => {
    const process = collector();
    const restore = setLogSink(process.sink);
    try {
      const first = collector();
      const second = collector();
      const a = kernelFramework();
      const b = kernelFramework();
      a.setLogSink(first.sink);
      b.setLogSink(second.sink);
      await Promise.all([
        a.running(async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          log.warn("from a");
        }),
        b.running(async () => log.warn("from b")),
      ]);
      log.warn("from nowhere");
      assert.deepEqual(first.messages, ["warn bub:test from a"]);
      assert.deepEqual(second.messages, ["warn bub:test from b"]);
      assert.deepEqual(process.messages, ["warn bub:test from nowhere"]);
    } finally {
      restore();
    }
  });

  it("restores the framework's previous sink, falling back to the process-wide one", async () => {
    const process = collector();
    const restoreProcess = setLogSink(process.sink);
    try {
      const own = collector();
      const framework = kernelFramework();
      const restore = framework.setLogSink(own.sink);
      await framework.running(async () => log.info("routed"));
      restore();
      await framework.running(async () => log.info("process"));
      assert.deepEqual(own.messages, ["info bub:test routed"]);
      assert.deepEqual(process.messages, ["info bub:test process"]);
    } finally {
      restoreProcess();
    }
  });
});
