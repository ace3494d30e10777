/**
 * Asking a person before a tool call runs: what the approval policy hands a channel, and
 * what the channel answers. A channel that can ask (the terminal of `bub chat`, a Telegram
 * chat) implements {@link Channel.askApproval}; the channel manager routes each question to
 * the channel the turn came from (docs/security.md, "Approval for dangerous tools").
 */
import type { Envelope } from "./envelope.ts";

/** A tool call waiting for a person's yes or no. */
export interface ApprovalRequest {
  /** The tool as the model called it (`bash`, `fs_write`). */
  readonly tool: string;
  /** The call's arguments, as the tool would get them. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** What would happen, for the person: the command line, or the file written. */
  readonly summary: string;
  /** Why it is asked about: `runs a shell command`, `writes outside the workspace`. */
  readonly reason: string;
  /** The turn's session. */
  readonly sessionId: string;
  /** The message that started the turn: its channel and chat are where the question goes. */
  readonly message: Envelope;
}

/** A channel's answer to an {@link ApprovalRequest}. */
export type ApprovalAnswer =
  | { readonly approved: true; /** Who said yes (for the log). */ readonly by?: string }
  | {
      readonly approved: false;
      /** Who said no (for the log). */
      readonly by?: string;
      /** Set when nobody could be asked (no terminal, the channel stopped): why, in a few words. */
      readonly unavailable?: string;
    };

/**
 * The capability of a channel that can ask a person. `signal` aborts when the question is
 * no longer wanted (no answer within the timeout, the turn was cancelled): the channel then
 * takes its question back (removes the buttons, restores the prompt) and settles at once;
 * anything but `{ approved: true }` counts as a no.
 */
export interface ApprovalAsker {
  askApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}
