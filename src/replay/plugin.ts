/**
 * The plugin a replay registers on its framework, last, so it decides before every other
 * plugin: tool calls that match a recorded one (same tool, same arguments) get the recorded
 * result without running; the others run in the scratch copy of the workspace (it answers
 * `provideSandbox`), except `bash` and `web.fetch`, which are refused unless the replay is
 * live. Every decision is logged for the report.
 */
import type { BubPlugin } from "../kernel/hooks.ts";
import { deny, replace } from "../kernel/interception.ts";
import { createHostSandbox } from "../tools/sandbox-host.ts";
import type { RecordedResults } from "./recorded.ts";

/** What happened to one tool call of the replay. */
export type ReplayCallSource = "reused" | "run" | "refused";

/** One tool call the replay saw, in call order. */
export interface ReplayCallRecord {
  readonly callId: string | null;
  readonly tool: string;
  readonly source: ReplayCallSource;
}

/** The tools that reach outside the scratch copy (the network, any process): off unless `--live`. */
export const LIVE_ONLY_TOOLS: ReadonlySet<string> = new Set(["bash", "web_fetch"]);

/** Options of {@link createReplayPlugin}. */
export interface ReplayPluginOptions {
  readonly recorded: RecordedResults;
  /** The scratch copy of the workspace the tools run in. */
  readonly scratch: string;
  /** Let `bash` and `web.fetch` run when no recorded call matches. */
  readonly live: boolean;
  /** Where each decision is appended. */
  readonly log: ReplayCallRecord[];
}

/** The message the model reads for a refused call. */
export function refusedMessage(tool: string): string {
  return `${tool} is off in this replay and no recorded call matched these arguments; run \`bub replay\` with --live to let it run`;
}

/**
 * The replay plugin.
 *
 * ```ts
 * const log: ReplayCallRecord[] = [];
 * await framework.registerPlugin(createReplayPlugin({ recorded, scratch, live: false, log }), "replay");
 * ```
 */
export function createReplayPlugin(options: ReplayPluginOptions): BubPlugin {
  const { recorded, scratch, live, log } = options;
  return {
    name: "replay",
    beforeToolCall({ call }) {
      const callId = call.callId ?? null;
      const found = recorded.take(call.tool, call.arguments);
      if (found.found) {
        log.push({ callId, tool: call.tool, source: "reused" });
        return replace(found.result);
      }
      if (!live && LIVE_ONLY_TOOLS.has(call.tool.replaceAll(".", "_"))) {
        log.push({ callId, tool: call.tool, source: "refused" });
        return deny(refusedMessage(call.tool));
      }
      log.push({ callId, tool: call.tool, source: "run" });
      return null;
    },
    provideSandbox() {
      return createHostSandbox({ workspace: scratch });
    },
  };
}
