/**
 * Where a turn's results go: outbound messages and streams are routed to the running channel
 * named by their `output_channel`, else their `channel`.
 */
import { fieldOf, type Envelope } from "../kernel/envelope.ts";
import { AsyncStreamEvents } from "../kernel/stream.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../kernel/approval.ts";
import type { Channel } from "../kernel/types.ts";
import { ChannelMessage } from "./message.ts";

/**
 * The {@link ChannelMessage} a channel is sent for an outbound: its session (default
 * `<channel>:default`), chat (default `default`), content, a copy of its context, and its
 * kind (`command`, `error`, else `normal`).
 */
export function outboundMessage(channel: Channel, message: Envelope): ChannelMessage {
  const context = fieldOf(message, "context");
  const kind = fieldOf(message, "kind");
  return new ChannelMessage({
    sessionId: String(fieldOf(message, "session_id") || `${channel.name}:default`),
    channel: channel.name,
    chatId: String(fieldOf(message, "chat_id") || "default"),
    content: String(fieldOf(message, "content") ?? ""),
    context: typeof context === "object" && context !== null ? { ...(context as Record<string, unknown>) } : {},
    kind: kind === "command" || kind === "error" ? kind : "normal",
  });
}

/** Routes outbounds and streams to channels; a channel is a target only while `isRunning` says so. */
export class OutboundRouter {
  readonly #channels: ReadonlyMap<string, Channel>;
  readonly #isRunning: (channel: Channel) => boolean;

  constructor(channels: ReadonlyMap<string, Channel>, isRunning: (channel: Channel) => boolean) {
    this.#channels = channels;
    this.#isRunning = isRunning;
  }

  /** The running channel named by the message's `output_channel`, else its `channel`; null when there is none. */
  target(message: Envelope): Channel | null {
    const output = fieldOf(message, "output_channel");
    const target = typeof output === "string" && output !== "" ? output : fieldOf(message, "channel");
    if (typeof target !== "string" || target === "") return null;
    const channel = this.#channels.get(target);
    return channel && this.#isRunning(channel) ? channel : null;
  }

  /**
   * Sends an outbound to its target channel: true once sent, false when there is no target.
   * A failing send, even a synchronous throw, comes back as a rejection.
   */
  async dispatch(message: Envelope): Promise<boolean> {
    const channel = this.target(message);
    if (!channel) return false;
    await channel.send(outboundMessage(channel, message));
    return true;
  }

  /**
   * Asks through the running channel the request's turn came from (its `channel`, not where
   * the answer goes); null when that channel is not running or cannot ask.
   */
  askApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | null> {
    const name = fieldOf(request.message, "channel");
    const channel = typeof name === "string" ? this.#channels.get(name) : undefined;
    if (!channel?.askApproval || !this.#isRunning(channel)) return Promise.resolve(null);
    return channel.askApproval(request, signal);
  }

  /** The turn's stream as the target channel renders or transforms it (same state); unchanged without one. */
  wrapStream(message: Envelope, stream: AsyncStreamEvents): AsyncStreamEvents {
    const channel = this.target(message);
    if (!channel?.streamEvents) return stream;
    return new AsyncStreamEvents(channel.streamEvents(message, stream), stream.state);
  }
}
