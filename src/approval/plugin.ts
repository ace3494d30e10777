/**
 * The approval policy as a plugin: a `beforeToolCall` interceptor that holds `bash` calls
 * and file writes outside the workspace (./policy.ts) until the user says yes, asked
 * through the channel the turn came from (the `askApproval` hook, which the running
 * channel manager answers through the turn's channel). A no, no answer within `approval_timeout_seconds`, or nobody to ask becomes a
 * tool error the model reads; the turn goes on. `createBub` registers it only with
 * `approval: ask`; a plugin registered later runs before it and may decide first.
 */
import { BubError, describeError } from "../kernel/errors.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../kernel/approval.ts";
import type { Envelope } from "../kernel/envelope.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import { deny, type ToolCall, type ToolCallDecision } from "../kernel/interception.ts";
import { createLogger } from "../kernel/log.ts";
import { workspaceOf } from "../tools/builtin/context.ts";
import { approvalNeed, type ApprovalNeed } from "./policy.ts";
import { approvalSettings } from "./settings.ts";

const log = createLogger("bub:approval");

/** What the policy uses of the framework: its settings, workspace and hooks (`askApproval`, answered by the running channel). */
export type ApprovalFramework = Pick<BubFramework, "settings" | "workspace" | "runtime">;

/** How to let such calls run without a question, said in every "could not ask" error. */
const HOW_TO_ALLOW = "set BUB_APPROVAL=off (or `approval: off` in config.yml) to run such calls without asking";

/** The tool errors the model reads, one per outcome. */
export const approvalErrors = {
  denied: (tool: string) => `${tool}: the user denied this call`,
  timeout: (tool: string, seconds: number) => `${tool}: the user did not answer within ${seconds} s, so this call was denied`,
  cancelled: (tool: string) => `${tool}: not run: the turn was stopped while waiting for the user's approval`,
  nobody: (tool: string, why: string) => `${tool}: not run: this call needs the user's approval (BUB_APPROVAL=ask) and nobody can be asked here (${why}); ${HOW_TO_ALLOW}`,
  failed: (tool: string, error: unknown) => `${tool}: not run: asking the user for approval failed (${describeError(error)})`,
  unresolvable: (tool: string, message: string) => `${tool}: not run: ${message}`,
};

/** Settles with `asking`, or rejects with the signal's reason once `signal` aborts (a channel that ignores it cannot hold the turn). */
function untilAborted<T>(asking: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    asking.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Asks through the channel of the turn's `message`, giving up when `turnSignal` aborts; the decision for the call. */
async function ask(framework: ApprovalFramework, call: ToolCall, request: Omit<ApprovalRequest, "message">, timeoutSeconds: number, turnSignal: AbortSignal, message: Envelope | null): Promise<ToolCallDecision | null> {
  if (!message) return deny(approvalErrors.nobody(call.tool, "no channel runs this turn"));
  const channel = message.channel || "?";
  const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
  const signal = AbortSignal.any([turnSignal, timeout]);
  log.info(`approval.ask tool=${call.tool} session_id=${request.sessionId} channel=${channel}: ${request.reason}`);
  let answer: ApprovalAnswer | null;
  try {
    // The running channel's answer (a channel manager's, the ACP server's); none where nobody can ask, as in `bub run`.
    answer = (await untilAborted(framework.runtime.call("askApproval", { request: { ...request, message }, signal }), signal)) ?? null;
  } catch (error) {
    if (timeout.aborted) answer = { approved: false };
    else if (turnSignal.aborted) return deny(approvalErrors.cancelled(call.tool));
    else {
      log.warn(`approval.failed tool=${call.tool} session_id=${request.sessionId}: ${describeError(error)}`);
      return deny(approvalErrors.failed(call.tool, error));
    }
  }
  if (answer === null) return deny(approvalErrors.nobody(call.tool, `the ${channel} channel cannot ask`));
  const by = answer.by ? ` by=${answer.by}` : "";
  if (answer.approved) {
    log.info(`approval.approved tool=${call.tool} session_id=${request.sessionId}${by}`);
    return null;
  }
  if (answer.unavailable) return deny(approvalErrors.nobody(call.tool, answer.unavailable));
  if (timeout.aborted) {
    log.info(`approval.timeout tool=${call.tool} session_id=${request.sessionId} after ${timeoutSeconds} s`);
    return deny(approvalErrors.timeout(call.tool, timeoutSeconds));
  }
  if (turnSignal.aborted) return deny(approvalErrors.cancelled(call.tool));
  log.info(`approval.denied tool=${call.tool} session_id=${request.sessionId}${by}`);
  return deny(approvalErrors.denied(call.tool));
}

/**
 * The approval plugin. Its `beforeToolCall` never throws: an interceptor that fails counts
 * as "no answer" and the call would run, so every failure is a denial here.
 */
export function createApprovalPlugin(framework: ApprovalFramework): BubPlugin {
  return {
    name: "approval",
    async beforeToolCall({ call, state, context, signal }) {
      try {
        const settings = await framework.settings.load(approvalSettings);
        if (settings.approval !== "ask") return null;
        let need: ApprovalNeed | null;
        try {
          need = await approvalNeed(call, workspaceOf({ turn: context }) ?? framework.workspace);
        } catch (error) {
          // A path that cannot be followed to its end (a link loop) cannot be judged: refused, saying why.
          if (BubError.isInstance(error) && error.kind === "invalid_input") return deny(approvalErrors.unresolvable(call.tool, error.message));
          throw error;
        }
        if (!need) return null;
        const sessionId = context.sessionId;
        return await ask(framework, call, { tool: call.tool, arguments: call.arguments, summary: need.summary, reason: need.reason, sessionId }, settings.approval_timeout_seconds, signal, context.message);
      } catch (error) {
        log.warn(`approval.failed tool=${call.tool}: ${describeError(error)}`);
        return deny(approvalErrors.failed(call.tool, error));
      }
    },
  };
}
