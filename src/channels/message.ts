import type { Envelope, EnvelopeKind, MediaItem, TurnLifespan } from "../kernel/envelope.ts";

export type { MediaItem } from "../kernel/envelope.ts";

/** The URL of a media item: its own, else a `data:` URL of its fetched bytes, else null. */
export async function mediaUrl(item: MediaItem): Promise<string | null> {
  if (item.url) return item.url;
  if (!item.dataFetcher) return null;
  const bytes = await item.dataFetcher();
  if (!bytes) return null;
  return `data:${item.mimeType};base64,${Buffer.from(bytes).toString("base64")}`;
}

/** `k=v|k=v` of a message context's keys not starting with `_`, in insertion order. */
export function formatContext(context: Readonly<Record<string, unknown>>): string {
  return Object.entries(context)
    .filter(([key]) => !key.startsWith("_"))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("|");
}

/** Fields accepted by {@link ChannelMessage}'s constructor. */
export interface ChannelMessageInit {
  sessionId: string;
  channel: string;
  content: string;
  chatId?: string;
  isActive?: boolean;
  kind?: EnvelopeKind;
  context?: Record<string, unknown>;
  media?: MediaItem[];
  /** See {@link TurnLifespan}. */
  lifespan?: TurnLifespan | null;
  outputChannel?: string;
}

/**
 * The envelope channels produce and consume. Its `context` always carries
 * `channel: "$<channel>"` and `chat_id`, and `outputChannel` defaults to `channel`.
 */
export class ChannelMessage implements Envelope {
  sessionId: string;
  channel: string;
  content: string;
  chatId: string;
  isActive: boolean;
  kind: EnvelopeKind;
  context: Record<string, unknown>;
  media: MediaItem[];
  lifespan: TurnLifespan | null;
  outputChannel: string;
  [extension: `${string}.${string}`]: unknown;

  constructor(init: ChannelMessageInit) {
    this.sessionId = init.sessionId;
    this.channel = init.channel;
    this.content = init.content;
    this.chatId = init.chatId ?? "default";
    this.isActive = init.isActive ?? false;
    this.kind = init.kind ?? "normal";
    this.context = init.context ?? {};
    this.media = init.media ?? [];
    this.lifespan = init.lifespan ?? null;
    this.outputChannel = init.outputChannel || this.channel;
    this.context.channel = `$${this.channel}`;
    this.context.chat_id = this.chatId;
  }

  /** `k=v|k=v` of the context keys not starting with `_`, in insertion order. */
  get contextStr(): string {
    return formatContext(this.context);
  }

  /** A copy with some fields changed (the context is copied, then re-stamped). */
  with(changes: Partial<ChannelMessageInit>): ChannelMessage {
    return new ChannelMessage({ ...this, context: { ...this.context }, ...changes });
  }

  /** One message from a burst: the last message with every content joined by newlines and all media. */
  static fromBatch(batch: readonly ChannelMessage[]): ChannelMessage {
    const last = batch.at(-1);
    if (!last) throw new Error("Batch cannot be empty");
    return last.with({ content: batch.map((message) => message.content).join("\n"), media: batch.flatMap((message) => message.media) });
  }
}
