// Hook pipeline in process: the 7 turn stages through processInbound with a builtin-like
// plugin, 10 observer plugins (loadState + saveState each) and a synchronous echo model.
// Run: node bench/kernel/pipeline.ts
import { BubFramework } from "../../src/kernel/framework.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { kernelFramework } from "../../test/support/framework.ts";

function makeFramework(): BubFramework {
  const bub = kernelFramework();
  const builtinLike: BubPlugin = {
    resolveSession: ({ message }) => `${message.channel}:${message.chatId}`,
    loadState: ({ sessionId }) => ({ session_id: sessionId }),
    buildPrompt: ({ message }) => message.content,
    runModel: ({ prompt }) => `echo: ${String(prompt)}`,
    saveState: () => {},
    renderOutbound: ({ sessionId, modelOutput }) => ({ sessionId, content: modelOutput }),
    dispatchOutbound: () => true,
  };
  bub.runtime.register(builtinLike, "builtin");
  for (let index = 0; index < 10; index++) {
    // Each observer contributes one state key of its own and records the turn on save.
    const key = `observer${index}`;
    let saved = 0;
    bub.runtime.register({ loadState: () => ({ [key]: index }), saveState: () => void saved++ }, `observer-${index}`);
  }
  return bub;
}

const bub = makeFramework();
const message = { channel: "bench", chat_id: "1", content: "hello" };
const rounds = 7;
const turns = 100_000;
for (let index = 0; index < 20_000; index++) await bub.processInbound(message);
const perTurn: number[] = [];
for (let round = 0; round < rounds; round++) {
  const start = process.hrtime.bigint();
  for (let index = 0; index < turns; index++) await bub.processInbound(message);
  perTurn.push(Number(process.hrtime.bigint() - start) / 1000 / turns);
}
perTurn.sort((a, b) => a - b);
const median = perTurn[Math.floor(rounds / 2)]!;
console.log(`pipeline: ${turns.toLocaleString("en")} turns x ${rounds} rounds, 11 plugins, sync echo model`);
console.log(`  median ${median.toFixed(2)} µs/turn (min ${perTurn[0]!.toFixed(2)}, max ${perTurn.at(-1)!.toFixed(2)}), target <= 25 µs`);
