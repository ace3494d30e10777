// One bound for every duration: settings and tool arguments beyond Node's timer limit
// (2^31-1 ms) are refused up front with the value and the allowed range, never fire at once.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { agentSettings, channelSettings } from "../../src/builtin/settings.ts";
import { ConfigError } from "../../src/config/settings.ts";
import { MAX_DURATION_SECONDS } from "../../src/config/duration.ts";
import { BubError } from "../../src/kernel/errors.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";
import { bashTools } from "../../src/tools/builtin/bash.ts";
import { createShellManager } from "../../src/tools/builtin/shell-manager.ts";
import { webTools } from "../../src/tools/builtin/web.ts";
import { call, toolContext } from "../tools/support/tool-context.ts";
import { withConfig } from "./support.ts";

const RANGE = "2147483 (the longest wait Node's timers allow, about 24.8 days)";

async function validationOf(promise: Promise<unknown>): Promise<{ message: string; errors: { path: string; message: string }[] }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(BubError.isInstance(error), String(error));
    assert.equal(error.kind, "invalid_input");
    return { message: error.message, errors: error.details?.errors as { path: string; message: string }[] };
  }
  throw new Error("expected a rejection");
}

describe("duration bounds", () => {
  it("is the largest whole number of seconds Node's timers accept", () => {
    assert.equal(MAX_DURATION_SECONDS, 2_147_483);
    assert.ok(MAX_DURATION_SECONDS * 1000 <= 2 ** 31 - 1 && (MAX_DURATION_SECONDS + 1) * 1000 > 2 ** 31 - 1);
  });

  it("refuses a duration setting above the limit, naming the variable, the value and the range", async () => {
    await withConfig("", { BUB_MODEL_TIMEOUT_SECONDS: "99999999" }, async (config) => {
      await assert.rejects(config.settings.load(agentSettings), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(
          error.message,
          `invalid setting BUB_MODEL_TIMEOUT_SECONDS=99999999: 99999999 is out of range: expected a number of seconds from 0 to ${RANGE} — fix it, or remove it to use the default`,
        );
        return true;
      });
    });
  });

  it("checks every duration setting, in config.yml too", async () => {
    const yaml = "model_idle_timeout_seconds: 3000000\ndebounce_seconds: -1\nmax_wait_seconds: 2147484\nactive_time_window: 1e12\n";
    await withConfig(yaml, {}, async (config) => {
      await assert.rejects(config.settings.load(channelSettings), (error: Error) => {
        assert.match(error.message, /^4 invalid settings/);
        assert.match(error.message, /model_idle_timeout_seconds: 3000000 \(.*line 1\): 3000000 is out of range: expected a number of seconds from 0 to 2147483/);
        assert.match(error.message, /debounce_seconds: -1 .*-1 is out of range: expected a number of seconds from 0 to 2147483/);
        assert.match(error.message, /max_wait_seconds: 2147484 .*2147484 is out of range/);
        assert.match(error.message, /active_time_window: 1000000000000 .*is out of range/);
        return true;
      });
    });
    await withConfig("model_timeout_seconds: 2147483\nmodel_idle_timeout_seconds: 0\n", {}, async (config) => {
      const agent = await config.settings.load(agentSettings);
      assert.equal(agent.model_timeout_seconds, MAX_DURATION_SECONDS);
      assert.equal(agent.model_idle_timeout_seconds, 0);
    });
  });

  it("bounds a model call attempt to 10 minutes by default; 0 or null turns the bound off", async () => {
    await withConfig("", {}, async (config) => {
      assert.equal((await config.settings.load(agentSettings)).model_timeout_seconds, 600);
    });
    assert.equal(defaultModelSettings().model_timeout_seconds, 600);
    await withConfig("", { BUB_MODEL_TIMEOUT_SECONDS: "0" }, async (config) => {
      assert.equal((await config.settings.load(agentSettings)).model_timeout_seconds, 0);
    });
    await withConfig("model_timeout_seconds: null\n", {}, async (config) => {
      assert.equal((await config.settings.load(agentSettings)).model_timeout_seconds, null);
    });
  });

  it("refuses bash timeout_seconds above the limit before starting anything", async () => {
    const shells = createShellManager({ killGraceMs: 100 });
    try {
      const started = Date.now();
      const { message, errors } = await validationOf(call(bashTools(shells), "bash", { cmd: "echo never", timeout_seconds: 2147484 }, toolContext({}, { workspace: process.cwd() })));
      assert.equal(message, "Tool 'bash' argument validation failed.");
      assert.deepEqual(errors.map(({ path, message }) => ({ path, message })), [
        { path: "timeout_seconds", message: `2147484 is out of range: expected a whole number of seconds from 1 to ${RANGE}` },
      ]);
      assert.ok(Date.now() - started < 1000);
      assert.equal(await call(bashTools(shells), "bash", { cmd: "echo fine", timeout_seconds: MAX_DURATION_SECONDS }, toolContext({}, { workspace: process.cwd() })), "fine");
    } finally {
      await shells.terminateAll();
    }
  });

  it("refuses web.fetch timeout above the limit with a validation error, not a RangeError", async () => {
    const { errors } = await validationOf(call(webTools(), "web.fetch", { url: "http://127.0.0.1:9/", timeout: 99999999 }, toolContext()));
    assert.deepEqual(errors.map(({ path, message }) => ({ path, message })), [
      { path: "timeout", message: `99999999 is out of range: expected a whole number of seconds from 1 to ${RANGE}` },
    ]);
  });
});
