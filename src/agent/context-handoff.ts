/**
 * The context-budget handoff (issue 37): before a call would fill more of the model's
 * context window than `context.budget_share` allows, the model writes a summary of the
 * conversation so far, the tape gets an anchor holding it (later calls read from there), and
 * the person is told in one line. Nothing is removed from the tape: `bub tape show` still
 * shows every earlier turn.
 */
import { createLogger } from "../kernel/log.ts";
import type { Usage } from "../kernel/stream.ts";
import type { ChatMessage, JsonObject } from "../kernel/tape-contract.ts";
import type { ContextUsage } from "../cost/context-budget.ts";
import type { ModelClient } from "../llm/model-client.ts";
import { providerOf } from "../llm/model-id.ts";
import { generateRunId } from "../llm/run-id.ts";
import { entries } from "../tape/entry.ts";
import type { Tape } from "../tape/tape.ts";
import type { TurnCosts } from "./turn-costs.ts";

const log = createLogger("bub:agent");

/** The anchor written when the context budget is reached. */
export const CONTEXT_BUDGET_ANCHOR = "auto_handoff/context_budget";

/** The first line of the message that carries the summary into later context. */
export const SUMMARY_HEADING = "[Summary of the earlier conversation, written by bub's context-budget handoff; the turns themselves are still on the tape]";

/** Most tokens the summary may take. */
const SUMMARY_MAX_TOKENS = 1024;

const SUMMARY_SYSTEM =
  "You write the handoff note of a long conversation between a person and an assistant that uses tools. " +
  "Later turns will see only your note, not the conversation, so keep every fact, decision, file name, number and open task they need.";

const SUMMARY_REQUEST =
  "Summarise the conversation so far in at most a few short paragraphs: what the person asked for, what was done and found, and what is still open. Write only the summary.";

function textOf(message: ChatMessage): string {
  return typeof message.content === "string" ? message.content : "";
}

/** A summary made without the model (its call failed): the last requests and the last answer, shortened. */
export function fallbackSummary(messages: readonly ChatMessage[]): string {
  const cut = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text);
  const asked = messages.filter((message) => message.role === "user").slice(-3).map((message) => `- asked: ${cut(textOf(message))}`);
  const answered = messages.filter((message) => message.role === "assistant" && textOf(message) !== "").at(-1);
  return ["Earlier turns (summarised without the model):", ...asked, ...(answered ? [`- last answer: ${cut(textOf(answered))}`] : [])].join("\n");
}

/** The one line the person reads. */
export function handoffNotice(usage: ContextUsage, sessionId: string): string {
  const window = usage.window === null ? "" : ` ${usage.window.toLocaleString("en-US")}-token`;
  return `(Earlier turns were summarised to keep the context within ${Math.round(usage.budgetShare * 100)}% of the model's${window} window; \`bub tape show ${sessionId}\` shows them in full.)`;
}

/** Asks the model for the summary; its `run` event (priced) goes on the tape. Null when the call failed. */
async function modelSummary(options: { tape: Tape; client: ModelClient; model: string; costs: TurnCosts; signal: AbortSignal }): Promise<string | null> {
  const { tape, client, model, costs, signal } = options;
  const history = await tape.readMessages();
  const runId = generateRunId();
  let text = "";
  let usage: Usage | null = null;
  let answeredBy = model;
  let status = "ok";
  try {
    const messages: ChatMessage[] = [{ role: "system", content: SUMMARY_SYSTEM }, ...history, { role: "user", content: SUMMARY_REQUEST }];
    for await (const event of client.stream({ model, messages, maxTokens: SUMMARY_MAX_TOKENS, signal })) {
      if (event.type === "text") text += event.delta;
      if (event.type === "finish") {
        usage = event.usage;
        answeredBy = event.model;
      }
    }
  } catch (error) {
    if (signal.aborted) throw error;
    status = "error";
    log.warn(`context.summary.failed tape=${tape.name} model=${model}`, error);
  }
  const cost = await costs.priceCall(answeredBy, usage);
  const data: JsonObject = { status, purpose: "context_summary", provider: providerOf(answeredBy), model: answeredBy, cost: { ...cost } };
  if (usage) data.usage = { ...usage };
  await tape.appendEvent("run", data, { run_id: runId });
  const summary = text.trim();
  return status === "ok" && summary !== "" ? summary : null;
}

/**
 * Hands the tape off onto a summary because the next call would pass the context budget;
 * returns the line that tells the person.
 */
export async function contextBudgetHandoff(options: { tape: Tape; client: ModelClient; model: string; costs: TurnCosts; usage: ContextUsage; sessionId: string; signal: AbortSignal }): Promise<string> {
  const { tape, usage } = options;
  const summary = (await modelSummary(options)) ?? fallbackSummary(await tape.readMessages());
  await tape.handoff(CONTEXT_BUDGET_ANCHOR, {
    reason: "context_budget",
    summary,
    tokens: usage.tokens,
    context_window: usage.window,
    share: Math.round(usage.share === null ? 0 : usage.share * 1000) / 1000,
    budget_share: usage.budgetShare,
  });
  // Reading after the last anchor leaves the anchor itself out: the summary reaches later calls as the context's first message.
  await tape.append(entries.message({ role: "user", content: `${SUMMARY_HEADING}\n${summary}` }, { handoff_summary: CONTEXT_BUDGET_ANCHOR }));
  return handoffNotice(usage, options.sessionId);
}
