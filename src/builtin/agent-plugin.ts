/**
 * The builtin plugin's agent hooks: state loading, prompt building, the streamed model
 * (the agent loop), tape store, context and sidecars, model options, and the interception
 * hooks for unknown tools and oversized results. Spec §6.1.
 */
import { Agent, type AgentOptions } from "../agent/agent.ts";
import { closeToolNames } from "../agent/tool-names.ts";
import { closestToolNames } from "../tools/suggest.ts";
import { formatContext, mediaUrl, type MediaItem } from "../channels/message.ts";
import { isRecord } from "../kernel/guards.ts";
import type { Envelope, Prompt, PromptPart } from "../kernel/envelope.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { BubHooks } from "../kernel/hooks.ts";
import { replace } from "../kernel/interception.ts";
import type { TurnState } from "../kernel/types.ts";
import type { ModelSettings } from "../llm/settings.ts";
import { codexSettings, type CodexSettings } from "../llm/codex/settings.ts";
import { createSpillSidecar, isSpillSidecar, SPILL_READ_MODEL_NAME, SPILL_READ_TOOL_NAME } from "../tape/spill.ts";
import type { Tape } from "../tape/tape.ts";
import type { TapeEntry, TapeStore } from "../kernel/tape-contract.ts";
import { registerTool, toolsOf } from "../tools/global.ts";
import { registerScheduleTools } from "../schedule/tools.ts";
import { linkTool } from "../channels/links/tool.ts";
import { agentSettings, channelSettings, spillSettings } from "./settings.ts";
import { turnUser } from "../cost/user.ts";
import { contextSettings, costSettings } from "../cost/settings.ts";

/** What the builtin continue prompt says. */
export const CONTINUE_PROMPT = "Continue the task until all targets are completed.";

/** Now as local ISO-8601 with the UTC offset, seconds precision: `2026-11-22T10:05:00+01:00`. */
export function localIsoNow(now = new Date()): string {
  const pad = (value: number) => String(Math.abs(value)).padStart(2, "0");
  const offset = -now.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  return (
    `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}T${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}` +
    `${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`
  );
}

/** The content part a media item becomes, or null when the model cannot take it. */
async function mediaPart(item: MediaItem): Promise<PromptPart | null> {
  let url: string | null;
  try {
    url = await mediaUrl(item);
  } catch {
    return null;
  }
  if (!url) return null;
  if (item.type === "image") return { type: "image_url", image_url: { url } };
  if (item.type === "video") return { type: "video_url", video_url: { url } };
  if (item.type === "audio") {
    const match = /^data:audio\/(?<format>[\w.+-]+);base64,(?<data>.*)$/s.exec(url);
    if (!match?.groups) return null;
    const format = String(match.groups.format).toLowerCase().replace(/^x-/, "").replace("mpeg", "mp3");
    return { type: "input_audio", input_audio: { data: match.groups.data, format } };
  }
  return null;
}

/** The prompt of a channel message: context and date line, then content; media as parts. */
export async function buildChannelPrompt(message: Envelope): Promise<Prompt> {
  const content = message.content;
  if (content.trim().startsWith(",")) {
    if (!Object.isFrozen(message)) message.kind = "command";
    return content;
  }
  const context = formatContext(message.context);
  const text = context ? `${context}\n---Date: ${localIsoNow()}---\n${content}` : content;
  if (message.media.length === 0) return text;
  const parts = (await Promise.all(message.media.map(mediaPart))).filter((part) => part !== null);
  return parts.length > 0 ? [{ type: "text", text }, ...parts] : text;
}

/** The session switches recorded by the `model` and `reasoning_effort` tools, latest first wins. */
const SWITCHES = { model_switch: "model", reasoning_effort_switch: "reasoning_effort" } as const;
type Switches = Partial<Record<(typeof SWITCHES)[keyof typeof SWITCHES], string>>;

/** What one tape's switches were when its events were last read: up to the event `lastId` (dated `lastDate`). */
export interface SwitchMemo {
  readonly store: TapeStore;
  readonly lastId: number;
  readonly lastDate: string;
  readonly found: Switches;
}

/** Tapes whose switches are remembered; the least recently used are forgotten past this. */
const MAX_SWITCH_MEMOS = 4096;

/** Applies events (oldest first) to `found`: a later non-empty value replaces an earlier one. */
function applySwitchEvents(found: Switches, events: readonly TapeEntry[]): void {
  for (const entry of events) {
    const name = entry.payload.name;
    const key = name === "model_switch" || name === "reasoning_effort_switch" ? SWITCHES[name] : undefined;
    const value = key && isRecord(entry.payload.data) ? entry.payload.data[key] : undefined;
    if (key && typeof value === "string" && value !== "") found[key] = value;
  }
}

/**
 * The latest value of each session switch on the tape. The first turn of a session reads its
 * events once; later turns read only the events appended since the last one seen (another
 * process's included), starting at that event itself: when it is no longer there with its
 * date, the tape was reset, and its events are read again from the start. The memo is kept
 * per `store` (default: the tape's; a turn reading through a snapshot passes the store below it).
 */
export async function sessionSwitches(tape: Tape, memos: Map<string, SwitchMemo>, store: TapeStore = tape.store): Promise<Switches> {
  const memo = memos.get(tape.name);
  if (memo) memos.delete(tape.name);
  let found: Switches = {};
  let events: TapeEntry[] | null = null;
  if (memo && memo.store === store) {
    const since = await tape.search(tape.query().kinds("event").afterId(Math.max(0, memo.lastId - 1)));
    if (memo.lastId === 0) events = since;
    else if (since[0]?.id === memo.lastId && since[0].date === memo.lastDate) events = since.slice(1);
    if (events) found = { ...memo.found };
  }
  const kept = events ? memo : undefined;
  events ??= await tape.search(tape.query().kinds("event"));
  applySwitchEvents(found, events);
  const last = events.at(-1);
  memos.set(tape.name, { store, lastId: last?.id ?? kept?.lastId ?? 0, lastDate: last?.date ?? kept?.lastDate ?? "", found });
  if (memos.size > MAX_SWITCH_MEMOS) for (const name of memos.keys()) if (memos.size > MAX_SWITCH_MEMOS) memos.delete(name);
  return { ...found };
}

/** The builtin hooks the agent answers. */
export type AgentHooks = Pick<
  Required<BubHooks>,
  "loadState" | "saveState" | "buildPrompt" | "runModelStream" | "continuePrompt" | "provideTapeSidecar" | "provideModelOptions" | "beforeToolCall" | "afterToolCall"
>;

/** Hooks wiring the agent into the builtin plugin, plus the agent itself. */
export function createAgentHooks(framework: BubFramework, options: Pick<AgentOptions, "tools" | "runCommand" | "skillsPrompt">): { agent: Agent; hooks: AgentHooks } {
  // Sidecars and the tape store are built by sync hooks, so their sections load first.
  /** The agent settings with the `codex` section, the same object while neither changes (the agent keeps its model client per object). */
  let withCodex: { model: ModelSettings; codex: CodexSettings; merged: ModelSettings } | null = null;
  const ready = async () => {
    await framework.settings.load(spillSettings);
    await framework.settings.load(channelSettings);
    // Read by `,tape.info` through configValue (cost.models, context.budget_share), comma commands included.
    await Promise.all([framework.settings.load(costSettings), framework.settings.load(contextSettings)]);
    const model = await framework.settings.load(agentSettings);
    const codex = await framework.settings.load(codexSettings);
    if (withCodex?.model !== model || withCodex.codex !== codex) withCodex = { model, codex, merged: { ...model, codex } };
    return withCodex.merged;
  };
  const agent = new Agent({ framework, settings: ready, ...options });
  const switchMemos = new Map<string, SwitchMemo>();

  const hooks: AgentHooks = {
    async loadState({ message, sessionId, context }) {
      if (message.lifespan) await message.lifespan.enter();
      await ready();
      context.agent = agent;
      const state: TurnState = { session_id: sessionId, user: turnUser(message) };
      const formatted = formatContext(message.context);
      if (formatted) state.context = formatted;
      // The turn's one read of its tape: the switches now, the anchor check and context in the run.
      const tape = agent.sessionTape(sessionId, context.workspace, state, context);
      Object.assign(state, await sessionSwitches(tape, switchMemos, agent.tapes.store));
      const model = message.context.model;
      if (typeof model === "string" && model !== "") state.model = model;
      // A turn a restart cut off resumes from its journal (src/agent/turn-journal.ts).
      if (message.context.retried_after_restart === true) state.retried_after_restart = true;
      return state;
    },

    async saveState({ message, error }) {
      if (message.lifespan) await message.lifespan.exit(error);
      return undefined;
    },

    buildPrompt({ message }) {
      return buildChannelPrompt(message);
    },

    runModelStream({ prompt, sessionId, state, context }) {
      // The turn's signal cancels the model call and every tool call (Ctrl-C in chat, quit, shutdown).
      return agent.runStream(sessionId, prompt, state, { model: state.model ?? null, context });
    },

    continuePrompt({ tape }) {
      const context = tape.context.state.context;
      return context ? `${CONTINUE_PROMPT} [context: ${context}]` : CONTINUE_PROMPT;
    },

    provideTapeSidecar() {
      return createSpillSidecar({ threshold: framework.settings.get(spillSettings).threshold });
    },

    async provideModelOptions() {
      const settings = await framework.settings.load(agentSettings);
      const ids = [...new Set([settings.model, ...(settings.fallback_models ?? [])].map((id) => id.trim()).filter(Boolean))];
      if (ids.length === 0) return null;
      return { models: ids.map((id) => ({ id, name: id })), currentModel: ids[0] };
    },

    beforeToolCall({ call }) {
      const available = agent.tools.modelTools().map((tool) => tool.name);
      if (available.includes(call.tool) || agent.tools.has(call.tool)) return null;
      const close = closeToolNames(call.tool, available);
      if (close.length > 0) return replace(`Tool \`${call.tool}\` does not exist. Did you mean one of the following?\n${close.map((name) => `- ${name}`).join("\n")}`);
      // Nothing similar enough: still name the nearest tools (by edit distance), never a guess about skills.
      const nearest = closestToolNames(call.tool, available);
      if (nearest.length > 0) return replace(`Tool \`${call.tool}\` does not exist. The closest tool names are:\n${nearest.map((name) => `- ${name}`).join("\n")}`);
      return replace(`Tool \`${call.tool}\` does not exist. No tools are available.`);
    },

    async afterToolCall({ call, result, context }) {
      if (result.error || typeof result.result !== "string") return;
      if (call.tool === SPILL_READ_TOOL_NAME || call.tool === SPILL_READ_MODEL_NAME) return;
      const tape = agent.turnTape(context);
      const spill = tape?.sidecars.find(isSpillSidecar);
      if (tape && spill) result.result = await spill.spillToolResult(tape, result.result, { tool: call.tool, runId: call.runId });
    },
  };
  return { agent, hooks };
}

/**
 * The agent as the builtin plugin answers it: its hooks over the framework's tools (the
 * schedule tools and the identity-link tool added, here so that a command without the agent,
 * `--help` among them, loads no tool), comma commands whose parser loads with the first
 * command, and the skills block whose discovery (and YAML parser) loads with the first model call.
 */
export function createBuiltinAgent(framework: BubFramework): AgentHooks {
  registerScheduleTools(framework);
  registerTool(framework, linkTool(framework));
  const config = (path: string) => framework.settings.getValue(path, undefined);
  const maxBytes = () => {
    const value = config("skill_max_bytes");
    return typeof value === "number" ? value : undefined;
  };
  // Imported once, at the first model call; every later turn reuses the module.
  let skills: Promise<typeof import("../skills/prompt.ts")> | undefined;
  return createAgentHooks(framework, {
    tools: toolsOf(framework),
    runCommand: async (line, options) => (await import("../tools/commands.ts")).runCommaCommand(line, options),
    skillsPrompt: async ({ promptText, workspace, allowedSkills }) =>
      await (await (skills ??= import("../skills/prompt.ts"))).buildSkillsPrompt(promptText, { workspace, allowedSkills, config, maxBytes: maxBytes() }),
  }).hooks;
}
