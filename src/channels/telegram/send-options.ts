/**
 * How a `telegram.send` message is sent (./tools.ts), written into its delivery ledger record
 * (`options`, JSON) so the ledger's sender (./delivery.ts) sends it the same way after a retry
 * or a restart. A reply's record has no options.
 */
import { TEXT_FORMATS, type TextFormat } from "./format.ts";

/** How a `telegram.send` message is sent (a record's `options`; a reply has none). */
export interface ToolSendOptions {
  format: TextFormat;
  silent: boolean;
  /** The first part answers this message id. */
  replyTo: number | null;
}

/** A record's options as written for a `telegram.send` message. */
export function toolSendOptions(options: ToolSendOptions): string {
  return JSON.stringify({ send: options });
}

/** The `telegram.send` options of a record, or null for a reply. */
export function toolOptionsOf(options: string): ToolSendOptions | null {
  if (!options.startsWith("{")) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(options);
  } catch {
    return null;
  }
  const send = typeof parsed === "object" && parsed !== null && "send" in parsed ? parsed.send : undefined;
  if (typeof send !== "object" || send === null) return null;
  const format = "format" in send ? TEXT_FORMATS.find((known) => known === send.format) : undefined;
  const replyTo = "replyTo" in send && typeof send.replyTo === "number" ? send.replyTo : null;
  return { format: format ?? "markdown", silent: "silent" in send && send.silent === true, replyTo };
}
