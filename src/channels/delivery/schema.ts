import { z } from "zod";
import { durationSeconds } from "../../config/duration.ts";

/** Settings of the outbound delivery ledger (YAML `delivery:`; env `BUB_DELIVERY_*`). */
export const deliverySchema = z.object({
  /** Tries before an outbound that keeps failing retryably (network, 429, 5xx) becomes a dead letter. */
  max_attempts: z.number().int().min(1).max(1000).default(8),
  /** The wait after an outbound's first failed try; doubled after each further one. */
  backoff_seconds: durationSeconds().default(1),
  /** The longest wait between two tries; a channel asking to wait longer (`retry_after`) makes the outbound a dead letter at once. */
  max_backoff_seconds: durationSeconds().default(300),
  /** Most sends in flight at once, each to another chat (a chat's replies go one at a time, in order). */
  concurrency: z.number().int().min(1).max(256).default(16),
});
