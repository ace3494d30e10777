/**
 * The `link` comma command (`,link` and `,link CODE`, Telegram's `/link CODE`): shows a code
 * for the sender to type on another channel, or redeems one shown there. Only in private
 * chats, and never offered to the model: a model that read a code somewhere must not be able
 * to link anyone.
 */
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import { defineTool, type Tool } from "../../tools/tool.ts";
import { CODE_TTL_MS, issueCode, redeemCode } from "./codes.ts";
import { privateIdentity } from "./identity.ts";
import { linkStoreOf, type LinkedSessionSource } from "./session.ts";

/** What the terminal is told to type, and what a chat is told to send. */
export const codeInstructions = (code: string, where: "terminal" | "chat"): string =>
  where === "terminal"
    ? `Link code: ${code}\nRun \`bub link ${code}\` in your terminal within ${CODE_TTL_MS / 60_000} minutes. It works once.`
    : `Link code: ${code}\nSend \`,link ${code}\` (or /link ${code}) to the bot in a private chat within ${CODE_TTL_MS / 60_000} minutes. It works once.`;

/** The `link` tool of a framework. */
export function linkTool(source: LinkedSessionSource): Tool {
  return defineTool({
    name: "link",
    description: "Link your identity on this channel with another channel: without a code, show a one-time code to type there; with a code shown there, link.",
    agentUse: false,
    context: true,
    parameters: () => z.object({ code: z.string().trim().optional().describe("A code shown on the other channel.") }),
    async run({ code }, { turn }) {
      // The message of the turn that ran `,link`: who sent it, and from which chat.
      const message = turn?.message ?? null;
      const identity = message ? privateIdentity(message) : null;
      if (!identity) throw new BubError("invalid_input", "Linking works only in a private chat with the bot: send ,link there.");
      const store = linkStoreOf(source);
      if (!code) return codeInstructions(await store.update((state) => issueCode(state, identity)), identity.startsWith("cli:") ? "chat" : "terminal");
      const person = await store.update((state) => redeemCode(state, code, identity));
      return `Linked: ${person.identities.join(", ")} (${person.id}).`;
    },
  });
}
