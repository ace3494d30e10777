// The installed `bub gateway` against the floor of a Telegram agent gateway
// (../shared/bench/floor-gateway.mjs: "the least a correct gateway does per message"), run the
// same way, on the same fakes, in the same invocation, loopback only.
//
// Both gateways serve a fake Telegram Bot API (test/support/fake-telegram.ts) with a fake
// OpenAI-compatible server (test/support/fake-openai.ts) answering every streaming request
// after 20 ms. `bub` is the package packed and installed the way users get it
// (`packAndInstall`), builtin agent, file tapes (`BUB_TAPE_STORE=file`), model `local:any`,
// `BUB_TELEGRAM_ALLOW_ALL=true`, everything else at its default (debounce 1 s, concurrent
// admission). The floor gets the same environment variables. BUB_*, FLOOR_* and UV_* (libuv's)
// variables set when running this bench are passed to both (e.g. `BUB_DEBOUNCE_SECONDS=0 node ...`).
// Shared with the other gateway benches: support/gateway.ts (processes, fakes, /proc) and
// support/workload.ts (the closed-loop burst).
//
// Workload: N private chats x M messages, closed loop per chat (support/workload.ts):
// answered / lost / duplicated / order kept.
//
// Measured per gateway, from the first message pushed to the last answer (+250 ms for the
// tape writes): CPU time (utime + stime from /proc/<pid>/stat) per message answered; peak
// RSS (VmHWM from /proc/<pid>/status, read just before SIGTERM, so it includes start-up).
//
// Run: node bench/gateway/floor.ts [chats=1000] [messages=5]      e.g. node bench/gateway/floor.ts 200 5
// The streamed-answer workload: BENCH_ANSWER_WORDS=200 node bench/gateway/floor.ts (both gateways
// get the same 200-word answers, about 400 chunks each).
// BENCH_FLOOR_SAME_REQUEST=1 also runs the floor with a system message and tool schemas the size
// of bub's (`floor=`), and that over fetch (`floorF`): an analysis of the ratio, not the goal.
// BENCH_LIBRARY_FLOOR=1 also runs the library gateway (support/library-gateway.ts: the floor's
// work through grammY, the AI SDK and undici, with none of bub's code but its fetch): bub/libs
// is what bub's own code costs, libs/floor what its libraries cost. An analysis too, not the goal.
import { printMachine } from "../support/processes.ts";
import { cpuSplitMs, intArg, MODEL_MS, passedThroughText, peakKiB, startGateway, type GatewayLabel } from "./support/gateway.ts";
import { burstSummary, closedLoop, type BurstResult } from "./support/workload.ts";

const CHATS = intArg(2, 1000, 10_000);
const MESSAGES = intArg(3, 5, 100);
// Goals (issue 33): CPU per message <= 5x the floor's, peak RSS <= 2x, 0 lost, 0 duplicated, order kept.
const CPU_GOAL = 5;
const RSS_GOAL = 2;

interface Result extends BurstResult {
  label: GatewayLabel;
  cpuMs: number;
  systemMs: number;
  cpuPerMessageMs: number;
  peakKiB: number;
  modelRequests: number;
  modelConnections: number;
  /** Characters of the system message and of the tool schemas in the first model request. */
  requestShape: { system: number; tools: number };
  exitCode: number | null;
}

/** The sizes the floor's FLOOR_SYSTEM_BYTES and FLOOR_TOOLS_BYTES stand for, in a recorded request body. */
function requestShape(body: { messages?: { role?: string; content?: unknown }[]; tools?: unknown[] } | undefined): { system: number; tools: number } {
  const system = body?.messages?.find((message) => message.role === "system")?.content;
  return { system: typeof system === "string" ? system.length : 0, tools: body?.tools?.length ? JSON.stringify(body.tools).length : 0 };
}

async function measure(label: GatewayLabel, env: Record<string, string> = {}): Promise<Result> {
  const gateway = await startGateway(label, { modelReplies: CHATS * MESSAGES + 100, env });
  try {
    const cpuStart = cpuSplitMs(gateway.pid);
    const burst = await closedLoop(gateway, CHATS, MESSAGES);
    const cpuEnd = cpuSplitMs(gateway.pid);
    const systemMs = cpuEnd.system - cpuStart.system;
    const cpu = cpuEnd.user - cpuStart.user + systemMs;
    const peak = peakKiB(gateway.pid);
    const modelRequests = gateway.openai.requests.length;
    const modelConnections = gateway.openai.connections;
    const shape = requestShape(gateway.openai.requests[0]?.body);
    return { label, ...burst, cpuMs: cpu, systemMs, cpuPerMessageMs: cpu / Math.max(burst.answered, 1), peakKiB: peak, modelRequests, modelConnections, requestShape: shape, exitCode: await gateway.stop() };
  } finally {
    if (!gateway.exited()) gateway.child.kill("SIGKILL");
  }
}

function row(result: Result, label: string = result.label): string {
  return [
    label.padEnd(6),
    burstSummary(result, CHATS * MESSAGES),
    `CPU ${result.cpuMs.toFixed(0)} ms (${result.systemMs.toFixed(0)} in the kernel) = ${result.cpuPerMessageMs.toFixed(3)} ms/msg`,
    `peak RSS ${(result.peakKiB / 1024).toFixed(1)} MiB`,
    `model calls ${result.modelRequests} over ${result.modelConnections} connection(s)`,
    `exit ${result.exitCode}`,
  ].join(" | ");
}

printMachine();
const passed = passedThroughText();
console.log(`${CHATS} private chats x ${MESSAGES} messages, closed loop per chat, model answers in ${MODEL_MS} ms, loopback fakes${passed ? `; passed to both: ${passed}` : ""}`);
const bub = await measure("bub");
console.log(row(bub));
const floor = await measure("floor");
console.log(row(floor));
const cpuRatio = bub.cpuPerMessageMs / floor.cpuPerMessageMs;
const rssRatio = bub.peakKiB / floor.peakKiB;
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
console.log(`CPU per message bub/floor: ${cpuRatio.toFixed(2)}x (goal <= ${CPU_GOAL}x: ${verdict(cpuRatio <= CPU_GOAL)})`);
console.log(`peak RSS bub/floor:        ${rssRatio.toFixed(2)}x (goal <= ${RSS_GOAL}x: ${verdict(rssRatio <= RSS_GOAL)})`);
console.log(`bub lost ${bub.lost} (goal 0: ${verdict(bub.lost === 0)}), duplicated ${bub.duplicated} (goal 0: ${verdict(bub.duplicated === 0)}), order ${bub.outOfOrder === 0 ? "kept" : "broken"} (goal kept: ${verdict(bub.outOfOrder === 0)})`);

if (process.env.BENCH_LIBRARY_FLOOR) {
  const libs = await measure("libs");
  console.log(row(libs));
  console.log(`  bub/libs: CPU per message ${(bub.cpuPerMessageMs / libs.cpuPerMessageMs).toFixed(2)}x, peak RSS ${(bub.peakKiB / libs.peakKiB).toFixed(2)}x; libs/floor: ${(libs.cpuPerMessageMs / floor.cpuPerMessageMs).toFixed(2)}x, ${(libs.peakKiB / floor.peakKiB).toFixed(2)}x`);
}

// Analysis, not a goal: the floor sending requests the size of bub's (its system message and
// tool schemas), over its keep-alive node:http agents and then over fetch, as bub's model and
// Bot API calls go. The ratios say how much of bub's cost is the request it sends and fetch.
if (process.env.BENCH_FLOOR_SAME_REQUEST) {
  const sized = { FLOOR_SYSTEM_BYTES: String(bub.requestShape.system), FLOOR_TOOLS_BYTES: String(bub.requestShape.tools) };
  console.log(`the floor again, with bub's request: ${bub.requestShape.system} characters of system message and ${bub.requestShape.tools} of tool schemas`);
  for (const [label, env] of [["floor=", sized], ["floorF", { ...sized, FLOOR_HTTP: "fetch" }]] as const) {
    const same = await measure("floor", env);
    console.log(row(same, label));
    console.log(`  bub/${label}: CPU per message ${(bub.cpuPerMessageMs / same.cpuPerMessageMs).toFixed(2)}x, peak RSS ${(bub.peakKiB / same.peakKiB).toFixed(2)}x`);
  }
}
