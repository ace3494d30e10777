/**
 * Where a turn's results go: outbound messages and streams are routed to the running channel
 * named by their `output_channel`, else their `channel`; one that no running channel takes is
 * logged as a warning naming the channel.
 */
import { replyChannelOf, type Envelope } from "../kernel/envelope.ts";
import { AsyncStreamEvents } from "../kernel/stream.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../kernel/approval.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import type { Channel } from "../kernel/types.ts";
import { ChannelMessage } from "./message.ts";
import { createLogger } from "../kernel/log.ts";
import { logOutbound } from "./traffic.ts";

const log = createLogger("bub:channels");

/**
 * The {@link ChannelMessage} a channel is sent for an outbound: its session (default
 * `<channel>:default`), chat (default `default`), content, a copy of its context, and its
 * kind (`command`, `error`, else `normal`).
 */
export function outboundMessage(channel: Channel, message: Envelope): ChannelMessage {
  return new ChannelMessage({
    sessionId: message.sessionId || `${channel.name}:default`,
    channel: channel.name,
    chatId: message.chatId || "default",
    content: message.content,
    context: { ...message.context },
    kind: message.kind,
  });
}

/** The warning for an outbound no running channel takes: which channel, and why. */
function undeliveredLine(message: Envelope, target: string | null, channels: ReadonlyMap<string, Channel>, isRunning: (channel: Channel) => boolean): string {
  const session = message.sessionId ?? "?";
  const running = [...channels.values()].filter(isRunning).map((channel) => channel.name).join(", ") || "none";
  if (target === null) return `channel.outbound undelivered session_id=${session}: the outbound names no channel (neither output_channel nor channel) — set one of them (running channels: ${running})`;
  const why = channels.has(target) ? `channel '${target}' is not running` : `no channel is named '${target}'`;
  return `channel.outbound undelivered session_id=${session}: ${why} — send it to one of the running channels (${running}) through output_channel or channel`;
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
    const target = replyChannelOf(message);
    if (target === null) return null;
    const channel = this.#channels.get(target);
    return channel && this.#isRunning(channel) ? channel : null;
  }

  /**
   * Sends an outbound to its target channel: true once sent, false when there is no target
   * (logged as a warning that names the channel: a reply is never dropped silently).
   * A failing send, even a synchronous throw, comes back as a rejection.
   */
  async dispatch(message: Envelope, context?: TurnContext): Promise<boolean> {
    const channel = this.target(message);
    if (!channel) {
      log.warn(undeliveredLine(message, replyChannelOf(message), this.#channels, this.#isRunning));
      return false;
    }
    const outbound = outboundMessage(channel, message);
    await channel.send(outbound, context);
    if (outbound.content.trim() !== "") logOutbound(outbound, channel.name);
    return true;
  }

  /**
   * Asks through the running channel the request's turn came from (its `channel`, not where
   * the answer goes); null when that channel is not running or cannot ask.
   */
  askApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | null> {
    const channel = this.#channels.get(request.message.channel);
    if (!channel?.askApproval || !this.#isRunning(channel)) return Promise.resolve(null);
    return channel.askApproval(request, signal);
  }

  /** The turn's stream as the target channel renders or transforms it (same state; `context`, the turn's, handed on); unchanged without one. */
  wrapStream(message: Envelope, stream: AsyncStreamEvents, context?: TurnContext): AsyncStreamEvents {
    const channel = this.target(message);
    if (!channel?.streamEvents) return stream;
    return new AsyncStreamEvents(channel.streamEvents(message, stream, context), stream.state);
  }
}
