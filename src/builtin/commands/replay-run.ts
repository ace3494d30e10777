/**
 * `bub replay <session>`: re-runs a session's turns, each as `bub run` would run it, on a
 * framework of its own (another model, another plugin set, and the replay plugin of
 * src/replay/plugin.ts registered last), under a new session named after the original
 * (`<session>/replay-<UTC time>`), with the tools working in a scratch copy of the
 * workspace. The original tape is only read. Then both tapes are read back alike and
 * compared (src/replay/compare.ts).
 */
import { createBub } from "../create.ts";
import { BubError } from "../../kernel/errors.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import { entries as tapeEntries } from "../../tape/entry.ts";
import { findSessionTape } from "../../tape/session-tapes.ts";
import { sessionTapeName } from "../../tape/tapes.ts";
import { compareTurns, type ReplayReport } from "../../replay/compare.ts";
import { createReplayPlugin, type ReplayCallRecord } from "../../replay/plugin.ts";
import { RecordedResults, recordedTurns, type RecordedTurn } from "../../replay/recorded.ts";
import { renderReplayText, replayJson } from "../../replay/render.ts";
import { scratchCopy } from "../../replay/scratch.ts";
import { listedPluginFailures } from "./listed-failures.ts";
import { runOnce } from "./run.ts";
import { withTapeStore } from "./tape-store.ts";

type Out = { write(text: string): unknown };

/** Options of `bub replay`. */
export interface ReplayOptions {
  /** `provider:model` for the replay (default: the configured model). */
  model?: string;
  /** Plugins for the replay in place of `BUB_PLUGINS` (comma separated); `plugins:` of config.yml still load. */
  plugins?: string;
  /** Let `bash` and `web.fetch` run when no recorded call matches. */
  live?: boolean;
  /** Keep the scratch copy of the workspace. */
  keep?: boolean;
  json?: boolean;
}

/** `20261201T173700123Z`: the UTC time, to the millisecond, in a session id. */
export function replayStamp(date: Date = new Date()): string {
  // To the millisecond: two replays of a session started within one second get sessions of their own.
  return date.toISOString().replace(/[-:.]/g, "");
}

/** The session tape `session` names and its turns. */
async function readTurns(framework: BubFramework, session: string): Promise<{ sessionId: string; tape: string; turns: RecordedTurn[] }> {
  return withTapeStore(framework, async (store) => {
    const found = await findSessionTape(store, session, framework.workspace);
    const turns = recordedTurns(await store.fetchAll({ tape: found.tape }), found.tape);
    return { sessionId: found.sessionId ?? found.tape, tape: found.tape, turns };
  });
}

function pluginList(plugins: string | undefined): string[] {
  return (plugins ?? "")
    .split(",")
    .map((each) => each.trim())
    .filter(Boolean);
}

/**
 * Replays `session` and writes the comparison to `out` (text, or JSON with `json`). Turns
 * that fail are compared like the others (their errors are on the replay's tape); a plugin
 * listed for the replay that does not load stops it before any turn. When `signal` aborts,
 * the running turn is interrupted as in `bub run`, no further turn starts, and what ran is
 * compared (the turns not replayed have no replay side).
 * @throws BubError `not_found` for an unknown session or one without turns; `config` when a listed plugin does not load.
 */
export async function runReplay(framework: BubFramework, session: string, options: ReplayOptions, out: Out, signal?: AbortSignal): Promise<ReplayReport> {
  const original = await readTurns(framework, session);
  if (original.turns.length === 0) throw new BubError("not_found", `Session ${JSON.stringify(session)} has no turns to replay — \`bub tape show ${session}\` shows what its tape holds`);
  const plugins = pluginList(options.plugins);
  const env: NodeJS.ProcessEnv = { ...framework.env };
  if (options.model) env.BUB_MODEL = options.model;
  if (options.plugins !== undefined) env.BUB_PLUGINS = plugins.join(",");
  const scratch = await scratchCopy(framework.workspace, { exclude: [framework.home] });
  const log: ReplayCallRecord[] = [];
  let replay: BubFramework | null = null;
  try {
    replay = await createBub({ workspace: framework.workspace, home: framework.home, env });
    replay.setLogSink(() => {});
    const failures = listedPluginFailures(replay);
    if (failures !== "") throw new BubError("config", failures.trim().replace(/^bub: /, ""));
    await replay.registerPlugin(createReplayPlugin({ recorded: new RecordedResults(original.turns), scratch: scratch.path, live: options.live === true, log }), "replay", { origin: "builtin" });
    const sessionId = `${original.sessionId}/replay-${replayStamp()}`;
    const tape = sessionTapeName(sessionId, replay.workspace);
    await replay.running(async (scope) => {
      await scope.tapeStore?.append(
        tape,
        tapeEntries.event("replay.start", { of_session: original.sessionId, of_tape: original.tape, model: options.model ?? null, plugins: options.plugins === undefined ? null : plugins, live: options.live === true }),
      );
    });
    const sink: Out = { write: () => true };
    for (const turn of original.turns) {
      if (signal?.aborted) break;
      await runOnce(replay, turn.prompt, { channel: turn.context.channel || "cli", chatId: turn.context.chat_id || "local", senderId: turn.context.sender_id || "human", sessionId }, sink, sink, signal);
    }
    const after = await readTurns(replay, tape);
    const report = compareTurns(original.turns, after.turns, log, {
      original: { sessionId: original.sessionId, tape: original.tape },
      replay: { sessionId, tape, model: options.model ?? null, plugins, live: options.live === true, scratch: options.keep ? scratch.path : null },
    });
    out.write(options.json ? `${JSON.stringify(replayJson(report), null, 2)}\n` : renderReplayText(report) + (options.keep ? `\nScratch copy kept at ${scratch.path}\n` : ""));
    return report;
  } finally {
    await replay?.shutdown();
    if (!options.keep) await scratch.remove();
  }
}
