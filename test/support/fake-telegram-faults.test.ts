import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startFakeTelegram } from "./fake-telegram.ts";
import { RandomFaults } from "./fake-telegram-faults.ts";

describe("the fake Bot API's random faults", () => {
  it("fails about the asked share of the chosen methods' calls, the same ones for the same seed, half 502 and half 429", () => {
    const draws = (seed: number) => {
      const faults = new RandomFaults({ methods: ["sendMessage"], rate: 0.1, seed });
      return { outcomes: Array.from({ length: 4000 }, () => faults.draw("sendMessage")), injected: faults.injected };
    };
    const first = draws(7);
    assert.deepEqual(draws(7).outcomes, first.outcomes, "same seed, same failures");
    assert.notDeepEqual(draws(8).outcomes, first.outcomes, "another seed, other failures");
    const failed = first.outcomes.filter((outcome) => outcome !== undefined).length;
    assert.ok(failed > 300 && failed < 500, `about 10% of 4000 failed: ${failed}`);
    assert.ok(first.injected[429] > 100 && first.injected[502] > 100, JSON.stringify(first.injected));
    assert.equal(first.injected[429] + first.injected[502], failed);
    assert.equal(new RandomFaults({ methods: ["sendMessage"], rate: 1, seed: 1 }).draw("getMe"), undefined, "other methods never fail");
  });

  it("answers the drawn failures over HTTP and counts them; scripted failures come first", async () => {
    const telegram = await startFakeTelegram();
    try {
      telegram.randomFaults({ methods: ["sendMessage"], rate: 0.5, seed: 3, retryAfter: 2 });
      telegram.fail("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" });
      const answers: { ok: boolean; error_code?: number; parameters?: { retry_after?: number } }[] = [];
      for (let index = 0; index < 40; index++) {
        const response = await fetch(`${telegram.apiRoot}/bot123:TEST/sendMessage`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ chat_id: 1, text: `m${index}` }) });
        answers.push((await response.json()) as (typeof answers)[number]);
      }
      assert.equal(answers[0]?.error_code, 403, "the scripted failure first");
      const rest = answers.slice(1);
      const codes = rest.filter((answer) => !answer.ok).map((answer) => answer.error_code);
      assert.ok(codes.length > 5 && codes.length < 35, `some failed, some not: ${codes.length}`);
      assert.ok(codes.every((code) => code === 429 || code === 502));
      assert.ok(rest.filter((answer) => answer.error_code === 429).every((answer) => answer.parameters?.retry_after === 2));
      const injected = telegram.injectedFaults;
      assert.equal(injected[429] + injected[502], codes.length);
      assert.equal(telegram.succeededOf("sendMessage").length, 39 - codes.length);
      telegram.randomFaults({ methods: ["sendMessage"], rate: 0, seed: 3 });
      const after = await fetch(`${telegram.apiRoot}/bot123:TEST/sendMessage`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ chat_id: 1, text: "calm" }) });
      assert.equal(after.status, 200, "rate 0 turns it off");
    } finally {
      await telegram.close();
    }
  });
});
