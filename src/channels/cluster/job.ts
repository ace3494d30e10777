/**
 * What a job of the shared inbound queue carries, and the names derived from it. A job's
 * payload is checked with zod when a worker takes it: a malformed job (written by another
 * version, or by hand) is failed, never run as something else.
 */
import { createHash } from "node:crypto";
import { z } from "zod";

/** The payload of one queued inbound message. */
const jobPayloadSchema = z.object({
  /** The message's stable id in its source (`telegram:<bot id>:<update id>`): replies are recorded under it. */
  key: z.string().min(1),
  /** The session the message belongs to: the job's `singletonKey`, so one turn runs per session at a time. */
  session: z.string().min(1),
  /** What the channel received, as received (a Telegram update), to be handled again by whichever process runs it. */
  item: z.unknown(),
  /** The session's tape, when the tapes are in the queue's database: the queue then says where it ends (`tapeEnd`). */
  tape: z.string().min(1).optional(),
  /**
   * Where that tape ended when the message became the next of its session (written by the
   * queue's own statements, see ./graphile-sql.ts): its first run reads the tape only when
   * its process did not hold it up to there.
   */
  tapeEnd: z.object({ id: z.number().int().nonnegative(), date: z.string() }).optional(),
});

export type JobPayload = z.infer<typeof jobPayloadSchema>;

/** The payload of `data`, or null when it is not one. */
export function parseJobPayload(data: unknown): JobPayload | null {
  const parsed = jobPayloadSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}

/**
 * The job id of a message: a UUID made from its `order` in its source (Telegram's update
 * id) and a hash of the queue's name and the message's key. The same message sent twice (a
 * poller that died before acknowledging it) is then one job, and messages queued in one
 * transaction (same creation time) still run in their order: pg-boss breaks that tie by id.
 */
export function jobIdOf(queue: string, key: string, order: number): string {
  const head = Math.max(0, Math.min(Math.trunc(order), 2 ** 48 - 1))
    .toString(16)
    .padStart(12, "0");
  const hash = createHash("sha256").update(`${queue}\u0000${key}`).digest("hex");
  // Shaped as a version 8 (custom) UUID with the RFC 4122 variant.
  const variant = ((Number.parseInt(hash.slice(3, 4), 16) & 0x3) | 0x8).toString(16);
  return `${head.slice(0, 8)}-${head.slice(8, 12)}-8${hash.slice(0, 3)}-${variant}${hash.slice(4, 7)}-${hash.slice(7, 19)}`;
}

/** How every inbound queue's name begins, and how its dead-letter queue's name ends. */
export const QUEUE_PREFIX = "bub_inbound_";
export const DEAD_LETTER_SUFFIX = "_dead";

/** The queue of one inbound source (`telegram-<bot id>`), and its dead-letter queue. */
export function queueNames(source: string): { queue: string; deadLetter: string } {
  const queue = `${QUEUE_PREFIX}${source.replace(/[^A-Za-z0-9_]/g, "_")}`;
  return { queue, deadLetter: `${queue}${DEAD_LETTER_SUFFIX}` };
}

/** The LISTEN/NOTIFY channel on which new messages are announced to the process running their session's turn. */
export const STEER_CHANNEL = "bub_inbound_steer";

/**
 * The LISTEN/NOTIFY channel on which an update that is not queued (a button press) is shown
 * to every process, for the one it concerns (the one that asked the question).
 */
export const BROADCAST_CHANNEL = "bub_inbound_broadcast";

/** What a broadcast says: `item` was received for `queue`'s source. */
export const broadcastSchema = z.object({ queue: z.string(), item: z.unknown() });

/** A message `id` of `queue` arrived for `session`. */
const steerNoticeSchema = z.object({ queue: z.string(), id: z.string(), session: z.string() });
export type SteerNotice = z.infer<typeof steerNoticeSchema>;

/** How many messages one steering notification names at most (a NOTIFY's payload stays far below its 8000 bytes). */
export const STEER_BATCH = 32;

/**
 * What a steering notification says: the messages (`jobs`: id and session each) of `queue`
 * that one accept queued, in their order. One notification per accept (per
 * {@link STEER_BATCH} messages), not one per message. A notification of one message, as an
 * older bub sent them, is read too.
 */
const steerBatchSchema = z.union([
  z.object({ queue: z.string(), jobs: z.array(z.object({ id: z.string(), session: z.string() })) }),
  steerNoticeSchema.transform(({ queue, id, session }) => ({ queue, jobs: [{ id, session }] })),
]);

/** The messages a steering notification announces for `queue` (none when it is not one, or of another queue). */
export function steerNoticesOf(value: unknown, queue: string): SteerNotice[] {
  const parsed = steerBatchSchema.safeParse(value);
  if (!parsed.success || parsed.data.queue !== queue) return [];
  return parsed.data.jobs.map(({ id, session }) => ({ queue, id, session }));
}

/** The steering notifications (JSON text each) of the messages `jobs` (id and session), {@link STEER_BATCH} per notification. */
export function steerNotifications(queue: string, jobs: readonly { id: string; session: string }[]): string[] {
  const notices: string[] = [];
  for (let start = 0; start < jobs.length; start += STEER_BATCH) {
    notices.push(JSON.stringify({ queue, jobs: jobs.slice(start, start + STEER_BATCH).map(({ id, session }) => ({ id, session })) }));
  }
  return notices;
}
