/**
 * One `bub gateway` per BUB_HOME (installed package, fake Bot API and model on 127.0.0.1): a
 * second gateway on the same home exits 1 with one line naming the first, which goes on
 * answering each message once; once the first is killed with SIGKILL, no stale lock keeps
 * another from starting.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { FAKE_BOT } from "../support/fake-telegram.ts";
import { usePostgres } from "../support/postgres.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { pollUntil, readyWithin, startBub, within, type LiveBub } from "./support/live.ts";

const postgres = usePostgres();

describe("bub gateway holds its BUB_HOME (installed package)", () => {
  const fx = useGatewayFixture();

  /** Starts a gateway and resolves once it polls or stands by to (the `polls`-th deleteWebhook call). */
  async function startPolling(polls: number, extra: Record<string, string> = {}): Promise<LiveBub> {
    const gateway = await startBub(["gateway"], { home: fx.home, env: fx.env(extra) });
    await readyWithin(gateway, fx.telegram.waitForCalls("deleteWebhook", polls), 15_000, "the gateway to poll", "bub gateway exited before it polled");
    return gateway;
  }

  /** How many outbounds the home's delivery ledger holds unconfirmed (`bub delivery list --json`). */
  async function pendingInLedger(): Promise<number> {
    const listed = await runBub(["delivery", "list", "--json"], { home: fx.home, env: fx.env() });
    assert.equal(listed.code, 0, `bub delivery list: exit ${listed.code}\n${listed.stderr}`);
    return (JSON.parse(listed.stdout) as { pending: number }).pending;
  }

  it("refuses a second gateway on the same home with one line, and takes over after a kill -9", async () => {
    fx.openai.script(reply.text("first answer"), reply.text("second answer"));
    const first = await fx.start();
    let second: LiveBub | null = null;
    try {
      second = await startBub(["gateway"], { home: fx.home, env: fx.env() });
      const refused = await second.exited(15_000);
      assert.equal(refused.code, 1, `the second gateway must exit 1\nstdout:\n${refused.stdout}\nstderr:\n${refused.stderr}`);
      assert.equal(
        refused.stderr,
        `bub: another bub gateway is running on ${fx.bubHome} (pid ${first.child.pid}) — stop it first, or set BUB_DATABASE_URL to run several\n`,
      );
      assert.equal(fx.telegram.overlappingPolls, 0, "the second gateway never polled");
      fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hello once" });
      await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the first gateway's reply");
      // Killed once the update is done and the ledger confirmed its reply as sent (a kill -9
      // before the confirmation sends it again: channels.md).
      const journal = join(fx.bubHome, "inbound", `telegram-${FAKE_BOT.id}.jsonl`);
      await pollUntil(async () => ((await readFile(journal, "utf8")).includes('"t":"done"') ? true : undefined), "the reply recorded in the inbound journal");
      await pollUntil(async () => ((await pendingInLedger()) === 0 ? true : undefined), "the reply confirmed in the delivery ledger");
    } finally {
      second?.kill();
      first.child.kill("SIGKILL");
      await first.exited(5_000);
    }
    assert.deepEqual(fx.telegram.callsOf("sendMessage").map((call) => call.payload.text), ["first answer"], "answered exactly once");
    const next = await startPolling(2);
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hello again" });
    await within(fx.telegram.waitForCalls("sendMessage", 2), 15_000, "the new gateway's reply");
    await fx.stop(next);
    assert.deepEqual(fx.telegram.callsOf("sendMessage").map((call) => call.payload.text), ["first answer", "second answer"]);
    assert.equal(fx.openai.requests.length, 2);
  });

  it("lets several gateways share a home with BUB_DATABASE_URL (they share the queue)", async () => {
    const cluster = { BUB_DATABASE_URL: await (await postgres()).createDatabase("lock") };
    const first = await startPolling(1, cluster);
    let second: LiveBub | null = null;
    try {
      second = await startPolling(2, cluster);
      await fx.stop(second);
      await fx.stop(first);
    } finally {
      second?.kill();
      first.kill();
    }
  });
});
