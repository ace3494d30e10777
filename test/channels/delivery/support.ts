// Shared by the delivery ledger's tests: a sender that records what it sends, and a bounded wait.
import type { DeliverySender } from "../../../src/channels/delivery/ledger.ts";

/** Records the texts it is asked to send, in order; every send succeeds at once. */
export function recordingSender(): DeliverySender & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    async send(record, partSent) {
      sent.push(record.text);
      await partSent(1, 1);
    },
    classify: (error) => ({ kind: "permanent", reason: String(error) }),
  };
}

/** Resolves once `check` holds, polling every 10 ms; fails after 10 s naming `what`. */
export async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
