// Shared by the shared-queue tests (turns, ledger keys): a stand-in for the channel manager.
import { toEnvelope, type Envelope } from "../../../src/kernel/envelope.ts";
import type { MessageHandler } from "../../../src/kernel/types.ts";

/**
 * A stand-in for the channel manager: runs a turn for each message handed to it, with `body`
 * as the turn; `settled` is called once the turn has settled.
 */
export function turnRunner(body: (message: Envelope) => Promise<void>, settled?: () => void): MessageHandler {
  return async (input) => {
    const message = toEnvelope(input);
    void (async () => {
      await message.lifespan?.enter();
      try {
        await body(message);
      } finally {
        await message.lifespan?.exit();
        message.lifespan?.settled?.("done");
        settled?.();
      }
    })();
  };
}
