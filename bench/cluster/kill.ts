// kill -9 of one gateway in the middle of a run: N installed `bub gateway` processes on one
// PostgreSQL and one bot (support/cluster.ts), the closed-loop burst of bench/gateway
// (N chats x M messages, each chat sending its next message once the previous one is
// answered; the fake model echoes each message's `q<chat>x<seq>` token). When half the
// messages are answered, the elected poller (`poller`, the default) or another gateway
// (`other`) gets SIGKILL and is not restarted; the survivors must finish the run.
//
// From the fake Bot API's sendMessage calls (every answer names the message it answers):
// - lost: messages sent to the bot and never answered (goal 0), and the chats they stalled;
// - answered twice: a message answered more than once. A duplicate counts as "in flight"
//   when its first answer came from the killed gateway (which ran its model call) less than
//   IN_FLIGHT_MS before the kill or after it (a reply still on its way when the process
//   died), i.e. the process may not have recorded it (at most one per turn then running in
//   the killed process is allowed, so at most BUB_MAX_CONCURRENT_TURNS and one per chat); any
//   other is "after completion" (goal 0). Each duplicate is listed with its timing;
// - order: per chat, the answers must come in the order of its messages, a late duplicate of
//   an earlier message after the answer to a later one included (goal kept);
// - retried turns: messages whose model call was made more than once (by whichever gateway),
//   and when the retries came; when a survivor was elected poller (from its log file).
//
// Run: node bench/cluster/kill.ts [chats=1000] [messages=5] [gateways=max(2, cores)] [poller|other]
// BUB_* variables are passed to every gateway (e.g. BUB_QUEUE_HEARTBEAT_SECONDS=10).
import { cpus, loadavg } from "node:os";
import { printMachine } from "../support/processes.ts";
import { answerToken, FIRST_CHAT, intArg, MODEL_MS, onSendMessage, passedThroughText } from "../gateway/support/gateway.ts";
import { burstSummary, closedLoop } from "../gateway/support/workload.ts";
import { startCluster, startDatabase } from "./support/cluster.ts";

const CHATS = intArg(2, 1000, 10_000);
const MESSAGES = intArg(3, 5, 100);
const GATEWAYS = intArg(4, Math.max(2, cpus().length), 64);
const VICTIM = process.argv[5] ?? "poller";
if (VICTIM !== "poller" && VICTIM !== "other") throw new Error(`argument 4 must be poller or other, got ${VICTIM}`);
if (GATEWAYS < 2) throw new Error("kill.ts needs at least 2 gateways");
const IN_FLIGHT_MS = 1_000;
/** The turns a gateway runs at once (BUB_MAX_CONCURRENT_TURNS, 64 when unset or 0). */
const TURNS_AT_ONCE = Number(process.env.BUB_MAX_CONCURRENT_TURNS) > 0 ? Number(process.env.BUB_MAX_CONCURRENT_TURNS) : 64;
const DEADLINE_MS = 600_000;

printMachine();
const passed = passedThroughText();
console.log(
  `load average ${loadavg().map((value) => value.toFixed(2)).join(" ")}; ${GATEWAYS} gateways on one embedded PostgreSQL, ${CHATS} chats x ${MESSAGES} messages (closed loop), model ${MODEL_MS} ms; kill -9 of the ${VICTIM === "poller" ? "elected poller" : "first gateway that is not the poller"} at half the answers${passed ? `; ${passed}` : ""}`,
);
const total = CHATS * MESSAGES;
const database = await startDatabase();
/** Per token: the gateways whose model it reached, in order. */
const modelCalls = new Map<string, number[]>();
/** Model calls of a message already run before (retries), when they came. */
const retriedAt: number[] = [];
/** Per token: when each answer reached the fake Bot API. */
const answers = new Map<string, number[]>();
/** Per chat: the seq of every answer, in arrival order. */
const perChat = new Map<number, number[]>();
let killAt = Number.POSITIVE_INFINITY;
let victim = -1;
let victimPolled = false;
let counting = false;
const cluster = await startCluster(database, GATEWAYS, {
  modelReplies: total + 40 * GATEWAYS + 100,
  onModelRequest(index, token, at) {
    if (!counting || !token) return;
    if (modelCalls.has(token)) retriedAt.push(at);
    modelCalls.set(token, [...(modelCalls.get(token) ?? []), index]);
  },
});
try {
  let answered = 0;
  onSendMessage(cluster.telegram, (payload, at) => {
    const token = answerToken(payload);
    if (!counting || !token) return;
    const times = answers.get(token.key) ?? [];
    if (times.length === 0) answered++;
    answers.set(token.key, [...times, at]);
    perChat.set(token.chat, [...(perChat.get(token.chat) ?? []), token.seq]);
    if (answered >= total / 2 && victim < 0) {
      const poller = cluster.poller();
      victim = VICTIM === "poller" ? (poller ?? 0) : cluster.gateways.findIndex((_, index) => index !== poller);
      victimPolled = victim === poller;
      killAt = cluster.kill9(victim);
      console.log(`kill -9 of gateway ${victim} (pid ${cluster.gateways[victim]!.pid}${victim === poller ? ", the elected poller" : ""}) after ${answered} answers`);
    }
  });
  counting = true;
  const burst = await closedLoop(cluster.target, CHATS, MESSAGES, DEADLINE_MS);
  counting = false;
  console.log(burstSummary(burst, total));

  const inFlight: string[] = [];
  const afterCompletion: string[] = [];
  for (const [token, times] of answers) {
    if (times.length < 2) continue;
    const ranOnVictim = modelCalls.get(token)?.[0] === victim;
    const before = killAt - times[0]!;
    const line = `${token}: first answer ${before >= 0 ? `${before.toFixed(0)} ms before` : `${(-before).toFixed(0)} ms after`} the kill (model call by gateway ${modelCalls.get(token)?.join(", then ") ?? "?"}), again ${(times[1]! - killAt).toFixed(0)} ms after it`;
    (ranOnVictim && before < IN_FLIGHT_MS ? inFlight : afterCompletion).push(line);
  }
  let orderBroken = 0;
  for (const seqs of perChat.values()) {
    let highest = 0;
    for (const seq of seqs) {
      if (seq < highest) orderBroken++;
      highest = Math.max(highest, seq);
    }
  }
  const retried = [...modelCalls.values()].filter((calls) => calls.length > 1).length;
  const election = cluster.election();
  const elected = election && election.index !== victim && election.at > performance.timeOrigin + killAt - 1000;
  const takeover = !victimPolled
    ? `gateway ${election?.index ?? "?"} went on polling`
    : elected
      ? `gateway ${election.index} elected poller ${(election.at - (performance.timeOrigin + killAt)).toFixed(0)} ms after the kill`
      : "no other gateway was elected poller";
  const since = (values: number[]) => (values.length === 0 ? "none" : `${(Math.min(...values) - killAt).toFixed(0)}–${(Math.max(...values) - killAt).toFixed(0)} ms after the kill`);
  const lost = burst.sent - burst.answered;
  const stalled = [...Array(CHATS).keys()].filter((index) => !answers.has(`q${FIRST_CHAT + index}x${MESSAGES}`)).length;
  const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
  console.log(`lost: ${lost} of ${burst.sent} messages sent (goal 0: ${verdict(lost === 0)}); ${stalled} chats did not finish`);
  const chatsTwice = new Set(inFlight.map((line) => /q(\d+)x/.exec(line)?.[1])).size;
  console.log(
    `answered twice after completion: ${afterCompletion.length} (goal 0: ${verdict(afterCompletion.length === 0)}); in flight at the kill: ${inFlight.length} in ${chatsTwice} chats (allowed one per turn running, at most ${TURNS_AT_ONCE}, one per chat: ${verdict(inFlight.length <= TURNS_AT_ONCE && chatsTwice === inFlight.length)})`,
  );
  for (const line of [...afterCompletion.map((text) => `  after completion ${text}`), ...inFlight.map((text) => `  in flight ${text}`)].slice(0, 20)) console.log(line);
  console.log(`order per chat: ${orderBroken === 0 ? "kept" : `broken ${orderBroken}x`} (goal kept: ${verdict(orderBroken === 0)})`);
  console.log(`turns run more than once: ${retried} (their second model calls ${since(retriedAt)}); ${takeover}; turns per gateway ${cluster.gateways.map((_, index) => [...modelCalls.values()].filter((calls) => calls.includes(index)).length).join(" / ")}`);
} finally {
  await cluster.stop();
  await database.stop();
}
