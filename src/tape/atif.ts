/**
 * A tape as a trajectory in Harbor's Agent Trajectory Interchange Format (ATIF v1.4,
 * https://github.com/laude-institute/harbor/blob/main/docs/rfcs/0001-trajectory-format.md):
 * `bub tape export --format atif` writes it, `--format cloudevents` wraps its steps
 * (./cloudevents.ts).
 *
 * Steps, in tape order: a `system` step for the system prompt when it first appears or
 * changes (the tape records it before every model call), a `user` step for each user
 * message (the channel's context line moved to `extra.context`), one `agent` step per model
 * call (its text, tool calls, their results as the observation, and the `run` event's
 * tokens and price as metrics), and a `system` step for each anchor, error and comma
 * command. Loop bookkeeping events are left out.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { splitPromptContext } from "./prompt-context.ts";
import { isRunEvent, runMetrics, sumRunMetrics, type RunMetrics } from "./run-metrics.ts";
import { contentText } from "./transcript-render.ts";

/** The ATIF version written. */
export const ATIF_SCHEMA_VERSION = "ATIF-v1.4";

type JsonObject = Record<string, unknown>;

/** One tool call of an agent step. */
export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  arguments: JsonObject;
}

/** One step of a trajectory. */
export interface AtifStep {
  step_id: number;
  timestamp?: string;
  source: "system" | "user" | "agent";
  model_name?: string;
  message: string;
  tool_calls?: AtifToolCall[];
  observation?: { results: { source_call_id?: string; content?: string }[] };
  metrics?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number; cost_usd?: number };
  extra?: JsonObject;
}

/** A whole trajectory. */
export interface AtifTrajectory {
  schema_version: typeof ATIF_SCHEMA_VERSION;
  session_id: string;
  agent: { name: string; version: string; model_name?: string };
  steps: AtifStep[];
  final_metrics: { total_prompt_tokens?: number; total_completion_tokens?: number; total_cached_tokens?: number; total_cost_usd?: number; total_steps: number };
  extra: JsonObject;
}

/** What the trajectory says about where it came from. */
export interface AtifOptions {
  readonly tape: string;
  readonly sessionId: string | null;
  readonly workspace: string | null;
  /** bub's version, for `agent.version`. */
  readonly agentVersion: string;
}

/** A model call's entries, gathered until its `run` event. */
interface OpenCall {
  key: string;
  date: string;
  turnId: string | null;
  text: string[];
  calls: AtifToolCall[];
  results: { source_call_id?: string; content?: string }[];
  metrics: RunMetrics | null;
  unparsed: string[];
}

function text(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value ?? null);
}

function callKey(entry: TapeEntry): string {
  const id = entry.meta.model_call_id ?? entry.meta.run_id;
  return typeof id === "string" ? id : `entry-${entry.id}`;
}

function turnOf(entry: TapeEntry): string | null {
  return typeof entry.meta.turn_id === "string" ? entry.meta.turn_id : null;
}

function toolCalls(entry: TapeEntry, unparsed: string[]): AtifToolCall[] {
  const calls = Array.isArray(entry.payload.calls) ? entry.payload.calls : [];
  return calls.map((call, index) => {
    const value = isRecord(call) ? call : {};
    const fn = isRecord(value.function) ? value.function : {};
    const id = typeof value.id === "string" && value.id !== "" ? value.id : `call_${entry.id}_${index}`;
    let args: JsonObject = {};
    if (isRecord(fn.arguments)) args = fn.arguments;
    else if (typeof fn.arguments === "string" && fn.arguments.trim() !== "") {
      try {
        const parsed: unknown = JSON.parse(fn.arguments);
        if (isRecord(parsed)) args = parsed;
        else unparsed.push(fn.arguments);
      } catch {
        unparsed.push(fn.arguments);
      }
    }
    return { tool_call_id: id, function_name: typeof fn.name === "string" ? fn.name : "(unnamed)", arguments: args };
  });
}

function observations(entry: TapeEntry, open: OpenCall): { source_call_id?: string; content?: string }[] {
  const results = Array.isArray(entry.payload.results) ? entry.payload.results : [];
  const ids = Array.isArray(entry.meta.tool_call_ids) ? entry.meta.tool_call_ids : [];
  return results.map((result, index) => {
    const fromMeta = ids[index];
    const id = typeof fromMeta === "string" && fromMeta !== "" ? fromMeta : open.calls[index]?.tool_call_id;
    const known = id !== undefined && open.calls.some((call) => call.tool_call_id === id);
    return known ? { source_call_id: id, content: text(result) } : { content: text(result) };
  });
}

function agentStep(open: OpenCall, stepId: number): AtifStep {
  const step: AtifStep = { step_id: stepId, timestamp: open.date, source: "agent", message: open.text.join("") };
  const metrics = open.metrics;
  if (metrics?.model) step.model_name = metrics.model;
  if (open.calls.length > 0) step.tool_calls = open.calls;
  if (open.results.length > 0) step.observation = { results: open.results };
  if (metrics) {
    const figures: NonNullable<AtifStep["metrics"]> = {};
    if (metrics.promptTokens !== null) figures.prompt_tokens = metrics.promptTokens;
    if (metrics.completionTokens !== null) figures.completion_tokens = metrics.completionTokens;
    if (metrics.cachedTokens !== null) figures.cached_tokens = metrics.cachedTokens;
    if (metrics.costUsd !== null) figures.cost_usd = metrics.costUsd;
    if (Object.keys(figures).length > 0) step.metrics = figures;
  }
  const extra: JsonObject = {};
  if (open.turnId) extra.turn_id = open.turnId;
  if (metrics?.status && metrics.status !== "ok") extra.status = metrics.status;
  if (metrics?.elapsedMs != null) extra.elapsed_ms = metrics.elapsedMs;
  if (open.unparsed.length > 0) extra.unparsed_arguments = open.unparsed;
  if (Object.keys(extra).length > 0) step.extra = extra;
  return step;
}

/**
 * The ATIF trajectory of a tape (`entries` oldest first).
 *
 * ```ts
 * const trajectory = tapeToAtif(await store.fetchAll({ tape }), { tape, sessionId: "cli:local", workspace, agentVersion: "0.1.0" });
 * ```
 */
export function tapeToAtif(entries: readonly TapeEntry[], options: AtifOptions): AtifTrajectory {
  const steps: AtifStep[] = [];
  const runs: RunMetrics[] = [];
  let open: OpenCall | null = null;
  let lastSystem: string | null = null;
  const push = (step: Omit<AtifStep, "step_id">) => steps.push({ step_id: steps.length + 1, ...step });
  const flush = () => {
    if (open) steps.push(agentStep(open, steps.length + 1));
    open = null;
  };
  const callOf = (entry: TapeEntry): OpenCall => {
    const key = callKey(entry);
    if (open?.key === key) return open;
    flush();
    const fresh: OpenCall = { key, date: entry.date, turnId: turnOf(entry), text: [], calls: [], results: [], metrics: null, unparsed: [] };
    open = fresh;
    return fresh;
  };
  for (const entry of entries) {
    const { payload } = entry;
    const base = { timestamp: entry.date };
    const turn = turnOf(entry);
    switch (entry.kind) {
      case "system": {
        const content = text(payload.content ?? "");
        if (content === lastSystem) break;
        flush();
        lastSystem = content;
        push({ ...base, source: "system", message: content });
        break;
      }
      case "message": {
        const content = contentText(payload.content);
        if (payload.role === "assistant") {
          callOf(entry).text.push(content);
          break;
        }
        flush();
        const split = splitPromptContext(content);
        const extra: JsonObject = {};
        if (turn) extra.turn_id = turn;
        if (split.context !== null) extra.context = split.context;
        if (payload.role !== "user") extra.role = payload.role;
        push({ ...base, source: payload.role === "system" ? "system" : "user", message: split.text, ...(Object.keys(extra).length > 0 ? { extra } : {}) });
        break;
      }
      case "tool_call": {
        const call = callOf(entry);
        if (typeof payload.content === "string") call.text.push(payload.content);
        call.calls.push(...toolCalls(entry, call.unparsed));
        break;
      }
      case "tool_result": {
        const call = callOf(entry);
        call.results.push(...observations(entry, call));
        break;
      }
      case "anchor":
        flush();
        push({ ...base, source: "system", message: `anchor: ${text(payload.name ?? "")}`, extra: { kind: "anchor", name: payload.name ?? null, state: payload.state ?? null } });
        break;
      case "error":
        flush();
        push({ ...base, source: "system", message: `error (${text(payload.kind ?? "unknown")}): ${text(payload.message ?? "")}`, extra: { kind: "error", error: { ...payload } } });
        break;
      case "event": {
        if (isRunEvent(entry)) {
          const metrics = runMetrics(entry);
          runs.push(metrics);
          callOf(entry).metrics = metrics;
          flush();
        } else if (payload.name === "command") {
          flush();
          const data = isRecord(payload.data) ? payload.data : {};
          push({ ...base, source: "user", message: text(data.raw ?? ""), extra: { kind: "command" } });
          push({ ...base, source: "system", message: `command ${text(data.name ?? "")}: ${text(data.status ?? "")}`, observation: { results: [{ content: text(data.output ?? "") }] }, extra: { kind: "command_output" } });
        }
        break;
      }
      default:
        break;
    }
  }
  flush();
  const totals = sumRunMetrics(runs);
  const final: AtifTrajectory["final_metrics"] = { total_steps: steps.length };
  if (totals.promptTokens !== null) final.total_prompt_tokens = totals.promptTokens;
  if (totals.completionTokens !== null) final.total_completion_tokens = totals.completionTokens;
  if (totals.cachedTokens !== null) final.total_cached_tokens = totals.cachedTokens;
  if (totals.costUsd !== null) final.total_cost_usd = totals.costUsd;
  const model = runs.find((run) => run.model !== null)?.model;
  return {
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: options.sessionId ?? options.tape,
    agent: { name: "bub", version: options.agentVersion, ...(model ? { model_name: model } : {}) },
    steps,
    final_metrics: final,
    extra: { tape: options.tape, workspace: options.workspace, model_calls: totals.modelCalls },
  };
}
