/**
 * The builtin agent: runs one prompt of a session through the agent loop (model steps,
 * tools, steering, automatic handoff) on a fork of the session tape, or runs a comma
 * command. Spec §6.2–6.4, with the departures listed in ARCHITECTURE.md.
 */
import { join } from "node:path";
import { isEmptyPrompt, type Prompt } from "../kernel/envelope.ts";
import { BubError } from "../kernel/errors.ts";
import type { BubFramework } from "../kernel/framework.ts";
import { recordInterruption, type PendingPrompts } from "./interrupt.ts";
import { TURN_RESUMED_EVENT, TurnJournal } from "./turn-journal.ts";
import { createLogger } from "../kernel/log.ts";
import { AsyncStreamEvents, createStreamState, type StreamEvent, type StreamState } from "../kernel/stream.ts";
import { correlated, currentCorrelation, newCorrelationId } from "../kernel/correlation.ts";
import type { Sandbox } from "../kernel/sandbox.ts";
import type { TapeContext, TapeStore } from "../kernel/tape-contract.ts";
import type { ModelOptions, TurnState } from "../kernel/types.ts";
import { childTurnContext, type TurnContext } from "../kernel/turn-context.ts";
import { contextOverflowError } from "../llm/errors.ts";
import { createModelClient, type ModelClient, type ModelClientOptions } from "../llm/model-client.ts";
import { runModelStep } from "../llm/model-step.ts";
import type { ModelSettings } from "../llm/settings.ts";
import { checkModelId, type ModelCheck } from "../llm/model-catalog.ts";
import { rememberSettingsSecrets } from "../config/secrets.ts";
import type { StepRecord } from "../llm/step-record.ts";
import { entries } from "../tape/entry.ts";
import { createMemoryTapeStore } from "../tape/memory-store.ts";
import { createTapes, type Tapes } from "../tape/tapes.ts";
import type { Tape } from "../tape/tape.ts";
import type { TapeFork } from "../tape/fork.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { RunStreamOptions, RuntimeAgent } from "../tools/runtime-agent.ts";
import type { ToolContext } from "../tools/tool.ts";
import { AgentHooks } from "./interceptors.ts";
import { isCommand, joinSystemBlocks, promptText } from "./prompt-text.ts";
import { SystemPromptRecorder } from "./system-recorder.ts";
import { TurnReads } from "./turn-reads.ts";
import { drainSteering } from "./steering-prompts.ts";
import { stateUser, TurnCosts } from "./turn-costs.ts";
import { CostLedgers } from "../cost/ledger.ts";
import { contextBudgetHandoff } from "./context-handoff.ts";
import { createHostSandbox } from "../tools/sandbox-host.ts";

const log = createLogger("bub:agent");

/** The anchor written when a step overflows the model's context window. */
export const AUTO_HANDOFF_ANCHOR = "auto_handoff/context_overflow";

/** Runs a comma command line (`,fs.read path=x`) and reports its output. */
export type CommandRunner = (line: string, options: { tools: ToolRegistry; context: ToolContext<Tape> }) => Promise<{ ok: boolean; output: string }>;

/** Renders the skills block of the system prompt for one step. */
export type SkillsPromptRenderer = (args: { promptText: string; state: TurnState; workspace: string; allowedSkills: ReadonlySet<string> | null }) => string | Promise<string>;

/** What {@link Agent} needs; everything is injected so tests can swap any part. */
export interface AgentOptions {
  readonly framework: BubFramework;
  /** The resolved model settings (read on every run, so config reloads apply). */
  readonly settings: () => ModelSettings | Promise<ModelSettings>;
  /** The tools the model and comma commands can use. */
  readonly tools: ToolRegistry;
  /** Comma command mode; without it a comma line is sent to the model like any prompt. */
  readonly runCommand?: CommandRunner;
  /** The skills block; without it no skills are offered. */
  readonly skillsPrompt?: SkillsPromptRenderer;
  /** Options for the model client (retry policy, sleep, env). */
  readonly client?: ModelClientOptions;
}

const utcIso = (): string => new Date().toISOString();

/**
 * The builtin agent. The turn's tape binding follows the framework's current `running()`
 * scope (one {@link Tapes} per store); outside a scope it keeps sessions in memory.
 *
 * ```ts
 * const agent = new Agent({ framework, settings: () => loadModelSettings(), tools });
 * const stream = await agent.runStream("cli:local", "hello", { session_id: "cli:local" });
 * for await (const event of stream) if (event.kind === "text") process.stdout.write(event.data.delta);
 * ```
 */
export class Agent implements RuntimeAgent {
  readonly framework: BubFramework;
  readonly tools: ToolRegistry;
  readonly #options: AgentOptions;
  readonly #tapes = new WeakMap<TapeStore, Tapes>();
  /** Spending per user and day over each store, kept between turns (src/cost/ledger.ts). */
  readonly #ledgers = new CostLedgers();
  #memoryStore: TapeStore | null = null;
  #client: { settings: ModelSettings; client: ModelClient } | null = null;
  /** Hash of the system prompt last written per tape name (§15.5: written when it changes). */
  readonly #systemPrompts = new SystemPromptRecorder();
  /** The fork each open run writes, by its turn context (what `afterToolCall` spills into). */
  readonly #turnTapes = new WeakMap<TurnContext, Tape>();
  /** Each turn's one read of its session tape. */
  readonly #turnReads = new TurnReads();

  constructor(options: AgentOptions) {
    this.#options = options;
    this.framework = options.framework;
    this.tools = options.tools;
  }

  /** The tapes over the current scope's store. */
  get tapes(): Tapes {
    const store = this.framework.tapeStore ?? (this.#memoryStore ??= createMemoryTapeStore());
    let tapes = this.#tapes.get(store);
    if (!tapes) {
      tapes = createTapes({
        store,
        context: this.framework.runtime.callSync("buildTapeContext", {}),
        sidecars: this.framework.runtime.callSync("provideTapeSidecar", {}),
        archivePath: join(this.framework.home, "tapes"),
      });
      this.#tapes.set(store, tapes);
    }
    return tapes;
  }

  configValue(path: string): unknown {
    return this.framework.settings.getValue(path, undefined);
  }

  async modelChoice(state: TurnState): Promise<{ model: string; fallbacks: readonly string[] }> {
    const settings = await this.#options.settings();
    return { model: state.model || settings.model, fallbacks: settings.fallback_models ?? [] };
  }

  modelOptions = (sessionId: string): Promise<ModelOptions> => this.framework.modelOptions(sessionId);

  async checkModel(modelId: string, signal?: AbortSignal): Promise<ModelCheck> {
    const settings = await this.#options.settings();
    const client = this.#clientFor(settings);
    return checkModelId(modelId, settings, (provider) => client.listModels(provider, { signal }), this.#options.client?.env);
  }

  async quitSession(sessionId: string, context?: TurnContext): Promise<void> {
    await this.framework.runtime.call("quitSession", context ? { sessionId, context } : { sessionId });
  }

  /**
   * The session tape as persisted (not a fork), read through the given state's context. With
   * the turn, its reads and the turn's run share one read of the store (see `tape/tape-snapshot.ts`).
   */
  sessionTape(sessionId: string, workspace: string, state: TurnState, turn?: TurnContext): Tape {
    const tapes = this.tapes;
    const tape = tapes.sessionTape(sessionId, workspace, { ...tapes.context, state });
    return turn ? this.#turnReads.of(turn, tape, tapes).tape.withContext(tape.context) : tape;
  }

  /** The tape a turn's run writes (a fork of its session tape), while the run is open. */
  turnTape(context: TurnContext): Tape | null {
    return this.#turnTapes.get(context) ?? null;
  }

  /**
   * The context of a run: the caller's when it is for the same session, a child of it for
   * another session (a subagent), else a new one from the framework.
   */
  #turnContext(sessionId: string, turnId: string, options: RunStreamOptions): TurnContext {
    const parent = options.context;
    const signal = options.signal ?? parent?.signal ?? new AbortController().signal;
    if (parent && parent.sessionId === sessionId && signal === parent.signal) return parent;
    if (parent) return childTurnContext(parent, sessionId, signal);
    return this.framework.turnContext({ turnId, sessionId, signal });
  }

  #clientFor(settings: ModelSettings): ModelClient {
    if (this.#client?.settings !== settings) this.#client = { settings, client: createModelClient(settings, this.#options.client) };
    return this.#client.client;
  }

  async runStream(sessionId: string, prompt: Prompt, state: TurnState, options: RunStreamOptions = {}): Promise<AsyncStreamEvents> {
    if (isEmptyPrompt(prompt)) {
      const message = "error: empty prompt";
      return AsyncStreamEvents.of([
        { kind: "text", data: { delta: message } },
        { kind: "final", data: { ok: false, text: message } },
      ]);
    }
    state.session_id ??= sessionId;
    // One id per turn (issue 19): the framework's when it started the turn, else a new one.
    const turnId = (state.turn_id ||= currentCorrelation()?.turnId || newCorrelationId());
    const turn = this.#turnContext(sessionId, turnId, options);
    turn.agent = this;
    const settings = await this.#options.settings();
    rememberSettingsSecrets(this.framework.settings); // kept out of the tape, the logs and tool environments
    // Resolve allowed tools before touching the tape: unknown names fail the call.
    const allowedTools = options.allowedTools ? this.tools.resolveToolNames(options.allowedTools) : null;
    const workspace = turn.workspace;
    // Asked once per turn: every tool call of the turn runs in the same place; nothing answers: the host in the workspace.
    const sandbox = (await this.framework.runtime.call("provideSandbox", { sessionId, workspace })) ?? createHostSandbox({ workspace, envPassthrough: () => this.configValue("tool_env_passthrough"), isolation: () => this.configValue("tool_isolation") });
    const tapes = this.tapes;
    const persisted = tapes.sessionTape(sessionId, workspace, { ...tapes.context, state });
    const read = this.#turnReads.of(turn, persisted, tapes);
    const fork = tapes.fork(read.tape.withContext(persisted.context), { mergeBack: !sessionId.startsWith("temp/") });
    // Steps that ran tools are journaled as they complete, so a turn retried after a crash resumes (issue 36).
    const journal = fork.mergeBack ? new TurnJournal(fork, tapes.store, turnId) : null;
    const streamState = createStreamState();
    if (state.context !== undefined) streamState.context = state.context;
    const pending: PendingPrompts = { prompts: [] };
    turn.tape = fork.tape;
    this.#turnTapes.set(turn, fork.tape);
    const runCommand = this.#options.runCommand;
    const body =
      isCommand(prompt) && runCommand
        ? this.#command(runCommand, prompt, fork.tape, state, sandbox, turn)
        : this.#loop(prompt, fork.tape, state, settings, streamState, { ...options, allowedTools, sandbox, turn, journal, refresh: read.refresh }, pending);
    return new AsyncStreamEvents(correlated({ turnId }, this.#onFork(fork, turn, body, pending, journal)), streamState);
  }

  /**
   * Runs `body` with the fork open; merges (or discards) it when the stream ends. A turn
   * whose signal aborted it first gets its unrecorded prompts and an `interrupted` event.
   */
  async *#onFork(fork: TapeFork, turn: TurnContext, body: AsyncGenerator<StreamEvent, void, undefined>, pending: PendingPrompts, journal: TurnJournal | null): AsyncGenerator<StreamEvent, void, undefined> {
    let completed = false;
    let running = false;
    try {
      await fork.tape.ensureBootstrapAnchor();
      running = true;
      yield* body;
      completed = true;
    } catch (error) {
      if (running && turn.signal.aborted) await recordInterruption(fork.tape, pending, turn.signal);
      throw error;
    } finally {
      this.#turnTapes.delete(turn);
      this.#turnReads.end(turn);
      if (fork.mergeBack) {
        try {
          await fork.merge();
          await journal?.clear();
        } catch (error) {
          log.error(`tape.merge.failed tape=${fork.tape.name} completed=${completed} turn_id=${currentCorrelation()?.turnId}`, error);
          throw error;
        }
      } else fork.discard();
    }
  }

  async *#command(run: CommandRunner, line: string, tape: Tape, state: TurnState, sandbox: Sandbox, turn: TurnContext): AsyncGenerator<StreamEvent, void, undefined> {
    const context: ToolContext<Tape> = { tape, runId: "run_command", state, turn, agent: this, sandbox, signal: turn.signal };
    const { ok, output } = await run(line.trim(), { tools: this.tools, context });
    if (!ok) turn.commandFailed = true;
    yield { kind: "text", data: { delta: output } };
    yield { kind: "final", data: { ok, text: output } };
  }

  async #systemPrompt(prompt: Prompt, state: TurnState, turn: TurnContext, allowedTools: ReadonlySet<string> | null, allowedSkills: ReadonlySet<string> | null): Promise<string> {
    const blocks = [this.framework.runtime.callSync("systemPrompt", { prompt, state }), this.tools.renderPrompt(allowedTools)];
    if (this.#options.skillsPrompt) {
      blocks.push(await this.#options.skillsPrompt({ promptText: promptText(prompt), state, workspace: turn.workspace, allowedSkills }));
    }
    return joinSystemBlocks(blocks);
  }

  /** Ends the loop on a step that cannot recover: the error on the tape, then an error and a failed final event. */
  async *#failStep(tape: Tape, streamState: StreamState, error: BubError, step: { step: number; elapsed_ms: number; runId: string | undefined; modelCallId?: string }): AsyncGenerator<StreamEvent, void, undefined> {
    streamState.error = error;
    await tape.append(entries.error(error, { run_id: step.runId, model_call_id: step.modelCallId }));
    await tape.appendEvent("loop.step", { step: step.step, elapsed_ms: step.elapsed_ms, status: "error", error: error.message, date: utcIso() });
    yield { kind: "error", data: error.toData() };
    yield { kind: "final", data: { ok: false } };
  }

  async *#loop(
    prompt: Prompt,
    tape: Tape,
    state: TurnState,
    settings: ModelSettings,
    streamState: StreamState,
    options: Omit<RunStreamOptions, "allowedTools" | "signal" | "context"> & { allowedTools: ReadonlySet<string> | null; sandbox: Sandbox; turn: TurnContext; journal: TurnJournal | null; refresh: () => Promise<void> },
    pending: PendingPrompts,
  ): AsyncGenerator<StreamEvent, void, undefined> {
    const model = options.model ?? settings.model;
    const allowedSkills = options.allowedSkills ? new Set(options.allowedSkills.map((name) => name.toLowerCase())) : null;
    if (allowedSkills) state.allowed_skills = [...allowedSkills];
    const user = stateUser(state, options.turn.sessionId);
    const costs = await TurnCosts.open(this.framework, tape, this.#ledgers.of(this.tapes.store), user);
    options.journal?.begin();
    const resume = state.retried_after_restart ? await options.journal?.restore() : null;
    if (resume) await tape.appendEvent(TURN_RESUMED_EVENT, { step: resume.step + 1, completed_steps: resume.step, tool_calls: resume.toolCalls, from_turn_id: resume.fromTurnId, date: utcIso() });
    else {
      await tape.appendEvent("loop.start", {
        model,
        user,
        prompt,
        allowed_skills: allowedSkills ? [...allowedSkills] : null,
        allowed_tools: options.allowedTools ? [...options.allowedTools] : null,
      });
    }
    const maxSteps = settings.max_steps ?? Number.POSITIVE_INFINITY;
    const client = this.#clientFor(settings);
    const tools = this.tools.select(options.allowedTools);
    const recorder = this.#systemPrompts.recorder(tape);
    // Once a step is recorded its prompts are on the tape: an interrupt must not write them again.
    const record = async (step: StepRecord) => {
      pending.prompts = [];
      return recorder(await costs.price(step));
    };
    let handedOff = false;
    let budgetHandoff = false;
    let wroteText = false;
    const continued = (from: Prompt) => this.framework.runtime.call("continuePrompt", { prompt: from, tape, state: streamState, context: options.turn, signal: options.turn.signal });
    let current: Prompt = resume ? await continued(resume.prompt) : prompt;
    const firstStep = (resume?.step ?? 0) + 1;
    for (let step = firstStep; step <= maxSteps; step++) {
      log.debug(`loop.step step=${step} tape=${tape.name}`);
      // Later steps see what was merged meanwhile (a subagent on this session, another process).
      if (step > firstStep) await options.refresh();
      await tape.appendEvent("loop.step.start", { step, prompt: current });
      const started = performance.now();
      const refused = await costs.refuse(step, current);
      if (refused) {
        yield* this.#failStep(tape, streamState, refused, { step, elapsed_ms: 0, runId: undefined });
        return;
      }
      const steering = await drainSteering(this.framework, state, options.turn);
      pending.prompts = [...steering, current];
      const systemPrompt = await this.#systemPrompt(current, state, options.turn, options.allowedTools, allowedSkills);
      const over = budgetHandoff ? null : await costs.overBudget(model, systemPrompt, [...steering, current].map(promptText).join("\n"));
      if (over) {
        budgetHandoff = true;
        yield { kind: "text", data: { delta: `${await contextBudgetHandoff({ tape, client, model, costs, usage: over, sessionId: options.turn.sessionId, signal: options.turn.signal })}\n\n` } };
      }
      const stepStream = runModelStep<Tape>({
        client,
        model,
        systemPrompt,
        history: () => tape.readMessages(),
        prompt: current,
        steering,
        tools,
        maxTokens: settings.max_tokens,
        state,
        hooks: new AgentHooks(this.framework.runtime, options.turn),
        tape,
        sandbox: options.sandbox,
        record,
        signal: options.turn.signal,
        turn: options.turn,
        agent: this,
      });
      // A step's failure events are held back until we know whether the loop recovers.
      const held: StreamEvent[] = [];
      let stepText = false;
      for await (const event of stepStream) {
        if (event.kind === "error" || (event.kind === "final" && !event.data.ok)) {
          held.push(event);
          continue;
        }
        if (event.kind === "text" && event.data.delta !== "") {
          // §15.4: the texts of separate steps are joined by a blank line.
          if (wroteText && !stepText) yield { kind: "text", data: { delta: "\n\n" } };
          stepText = true;
        }
        yield event;
      }
      if (stepText) wroteText = true;
      const outcome = stepStream.outcome;
      if (!outcome) throw new Error(`model step ${step} ended without an outcome`);
      const elapsed_ms = Math.round(performance.now() - started);
      streamState.usage = outcome.usage ?? streamState.usage;
      if (outcome.status === "error") {
        const message = outcome.error?.message ?? "model step failed";
        if (outcome.contextLengthExceeded && !handedOff) {
          handedOff = true;
          await tape.handoff(AUTO_HANDOFF_ANCHOR, { reason: "context_length_exceeded", error: message });
          await tape.appendEvent("loop.step", { step, elapsed_ms, status: "auto_handoff", error: message, date: utcIso() });
          current = prompt;
          continue;
        }
        if (outcome.contextLengthExceeded) {
          // Still too long after the automatic handoff: say what happened and what to do.
          yield* this.#failStep(tape, streamState, contextOverflowError(outcome.model || model, outcome.error), { step, elapsed_ms, runId: outcome.runId, modelCallId: outcome.modelCallId });
          return;
        }
        streamState.error = outcome.error;
        await tape.appendEvent("loop.step", { step, elapsed_ms, status: "error", error: message, date: utcIso() });
        yield* held;
        return;
      }
      let more = outcome.toolCalls.length > 0 || outcome.toolResults.length > 0;
      if (!more && options.turn.steering) more = options.turn.steering.messageCount(options.turn) > 0;
      if (!more && !wroteText && outcome.status === "ok" && outcome.text.trim() === "") {
        // A reply with neither text nor tool calls would leave the person with nothing.
        const error = new BubError("provider", `The model ${outcome.model} returned an empty reply. Try again, or pick another model with BUB_MODEL.`);
        yield* this.#failStep(tape, streamState, error, { step, elapsed_ms, runId: outcome.runId, modelCallId: outcome.modelCallId });
        return;
      }
      if (!more) {
        await tape.appendEvent("loop.step", { step, elapsed_ms, status: "ok", date: utcIso() });
        return;
      }
      current = await continued(current);
      await tape.appendEvent("loop.step", { step, elapsed_ms, status: "continue", date: utcIso() });
      await options.journal?.checkpoint();
    }
    const error = new BubError("unknown", `max_steps_reached=${settings.max_steps}: the agent stopped after ${settings.max_steps} steps. Raise BUB_MAX_STEPS (max_steps in config.yml, default 100) if the task needs more steps.`);
    streamState.error = error;
    await tape.append(entries.error(error));
    yield { kind: "error", data: error.toData() };
    yield { kind: "final", data: { ok: false } };
  }
}
