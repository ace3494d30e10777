import type { Command } from "commander";
import type { Envelope, Prompt } from "./envelope.ts";
import type { TurnContext } from "./turn-context.ts";
import type { Sandbox } from "./sandbox.ts";
import type { ApprovalAnswer, ApprovalRequest } from "./approval.ts";
import type { AsyncStreamEvents, StreamState } from "./stream.ts";
import type { TurnState, ModelOptions, AdmitDecision, TurnSnapshot, SteeringInbox, Channel, MessageHandler } from "./types.ts";
import type { TapeStore, TapeContext, TapeSidecar, TapeHandle } from "./tape-contract.ts";
import type {
  LlmCallRequest,
  LlmCallDecision,
  LlmCallResult,
  ToolCall,
  ToolCallDecision,
  ToolCallResult,
} from "./interception.ts";

/** A value or a promise of it: what ordinary (async-capable) hooks may return. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * What `renderOutbound` answers: a typed envelope, or a partial one (at least its content)
 * that the framework completes with `toEnvelope`'s defaults (snake_case keys included).
 */
export type OutboundInit = Partial<Envelope> & { content: string };

/** "No answer": a firstresult hook returning this lets the next plugin answer. */
export type NoResult = null | undefined;

/**
 * What a provider hook (`provideTapeStore`, `provideSteeringInbox`) may return: the value
 * itself (disposed at scope exit when it is `AsyncDisposable`/`Disposable`), or a generator
 * whose first yielded value is used and whose remainder runs as cleanup.
 */
export type Provided<T> = T | Generator<T, void, unknown> | AsyncGenerator<T, void, unknown>;

/** The stages at which `onError` observers are told of a failure. */
export type ErrorStage = "turn" | "run_model" | "save_state" | "dispatch_outbound" | (string & {});

/**
 * Every hook of the runtime: its single argument object and its return type.
 *
 * The hooks of a turn get its typed {@link TurnContext} (`context`: the workspace, the
 * settings, the tapes, a logger, the steering inbox) and its `signal`: it aborts when the turn is cancelled (Ctrl-C
 * in `bub chat`, `quit`, the end of a shutdown's grace period, an editor's cancel), and work
 * that takes time (a model call, a tool, a wait for a person) should stop when it does. The
 * caller of `processInbound` passes it; a turn nobody can cancel gets one that never aborts.
 * Plugins implement any subset. Third-party hooks may be added with declaration merging:
 *
 * ```ts
 * declare module "bub-ts" { interface BubHooks { myHook(args: { x: number }): string } }
 * ```
 *
 * Hooks documented as **sync-only** must not return a Promise; the type forbids it, and
 * at run time a Promise is skipped with a warning. How each hook's implementations combine
 * is declared once, in `HOOK_TABLE` (`hook-table.ts`).
 */
export interface BubHooks {
  /** firstresult — the session id of an inbound message. */
  resolveSession(args: { message: Envelope; /** Absent when a channel asks before admitting the message. */ signal?: AbortSignal }): MaybePromise<string | NoResult>;
  /**
   * broadcast — state for the turn; results merged, higher precedence wins. Declare your keys on
   * {@link TurnState}; at run time any plain object is merged (see `mergeLoadedStates`).
   */
  loadState(args: { message: Envelope; sessionId: string; context: TurnContext; signal: AbortSignal }): MaybePromise<Partial<TurnState> | NoResult>;
  /** firstresult — the prompt for the model. A falsy answer falls back to the message content. */
  buildPrompt(args: { message: Envelope; sessionId: string; state: TurnState; context: TurnContext; signal: AbortSignal }): MaybePromise<Prompt | NoResult>;
  /** firstresult — run the model, non-streaming. */
  runModel(args: { prompt: Prompt; sessionId: string; state: TurnState; context: TurnContext; signal: AbortSignal }): MaybePromise<string | NoResult>;
  /** firstresult — run the model as a stream of events. */
  runModelStream(args: { prompt: Prompt; sessionId: string; state: TurnState; context: TurnContext; signal: AbortSignal }): MaybePromise<AsyncStreamEvents | NoResult>;
  /** firstresult — the prompt that continues the agent loop after a tool round. */
  continuePrompt(args: { prompt: Prompt; tape: TapeHandle; state: StreamState; context: TurnContext; signal: AbortSignal }): MaybePromise<string | NoResult>;
  /** broadcast — persist what the turn changed. Runs even when the model failed. */
  saveState(args: {
    sessionId: string;
    state: TurnState;
    message: Envelope;
    modelOutput: string;
    context: TurnContext;
    /** The error the turn is failing with, if any. */
    error?: unknown;
    /** Already aborted when the turn was cancelled: save quickly, without waiting on it. */
    signal: AbortSignal;
  }): MaybePromise<void>;
  /** broadcast — outbound envelopes for the model output (one, a list, or none). */
  renderOutbound(args: {
    message: Envelope;
    sessionId: string;
    state: TurnState;
    modelOutput: string;
    context: TurnContext;
    signal: AbortSignal;
  }): MaybePromise<OutboundInit | OutboundInit[] | NoResult>;
  /** broadcast — deliver one outbound envelope. */
  dispatchOutbound(args: { message: Envelope; /** The turn's; absent for a message sent outside a turn. */ context?: TurnContext; /** The turn's; absent for a message sent outside a turn. */ signal?: AbortSignal }): MaybePromise<boolean | void | NoResult>;
  /**
   * broadcast, **sync-only** — add commands to the `bub` command line. `command` names the
   * subcommand this run dispatches to when the arguments say so (absent for `bub --help`,
   * `bub help …` and no command); a plugin may then register only that one of its commands.
   */
  registerCliCommands(args: { app: Command; command?: string }): undefined;
  /** broadcast, **sync-only**, registration order — a fragment for `bub onboard`'s config. */
  onboardConfig(args: { currentConfig: Record<string, unknown> }): Record<string, unknown> | NoResult;
  /** broadcast — models offered for a session. */
  provideModelOptions(args: { sessionId: string; workspace: string }): MaybePromise<ModelOptions | NoResult>;
  /** observer — told of every failure; its own failures are logged and swallowed. */
  onError(args: { stage: ErrorStage; error: unknown; message: Envelope | null; /** The turn's, once its session was resolved; absent for a failure outside a turn. */ context?: TurnContext }): MaybePromise<void>;
  /** chained interceptor — change a model request, or `finish(text)` to skip the call. */
  beforeLlmCall(args: { request: LlmCallRequest; state: TurnState; context: TurnContext; signal: AbortSignal }): MaybePromise<LlmCallRequest | LlmCallDecision | NoResult>;
  /** observer — once per real model call. */
  afterLlmCall(args: { request: LlmCallRequest; result: LlmCallResult; state: TurnState; context: TurnContext; signal: AbortSignal }): MaybePromise<void>;
  /** chained interceptor — `proceed(args)`, `replace(result)` or `deny(message)`. */
  beforeToolCall(args: { call: ToolCall; state: TurnState; context: TurnContext; signal: AbortSignal }): MaybePromise<ToolCallDecision | NoResult>;
  /** observer — may assign `result.result` to change what the model sees. */
  afterToolCall(args: { call: ToolCall; result: ToolCallResult; state: TurnState; context: TurnContext; signal: AbortSignal }): MaybePromise<void>;
  /** broadcast, **sync-only** — a fragment of the system prompt. */
  systemPrompt(args: { prompt: Prompt; state: TurnState }): string | NoResult;
  /** firstresult, **sync-only** — the tape store for a `running()` scope. */
  provideTapeStore(args: Record<string, never>): Provided<TapeStore> | NoResult;
  /** broadcast, **sync-only** — a sidecar tape mounted on every session tape. */
  provideTapeSidecar(args: Record<string, never>): TapeSidecar | NoResult;
  /** broadcast, **sync-only** — channels this plugin provides. */
  provideChannels(args: { messageHandler: MessageHandler }): Channel[] | NoResult;
  /** firstresult, **sync-only** — how a tape becomes model context. */
  buildTapeContext(args: Record<string, never>): TapeContext | NoResult;
  /** firstresult — admission of a message for a session that may be busy. */
  admitMessage(args: { sessionId: string; message: Envelope; turn: TurnSnapshot }): MaybePromise<AdmitDecision | NoResult>;
  /** firstresult, **sync-only** — the steering inbox for a `running()` scope. */
  provideSteeringInbox(args: Record<string, never>): Provided<SteeringInbox> | NoResult;
  /**
   * firstresult — ask the person behind the request's turn about a tool call (the approval
   * policy calls it; a channel that can ask answers for the turns it runs); nothing: nobody can be asked.
   */
  askApproval(args: { request: ApprovalRequest; signal: AbortSignal }): MaybePromise<ApprovalAnswer | NoResult>;
  /** broadcast — stop a session's work: its running turns (except the caller's own) and its waiting messages (`,quit`). */
  quitSession(args: { sessionId: string; /** The turn asking (`,quit`): it is spared; absent when nobody's turn asks (Ctrl-C). */ context?: TurnContext }): MaybePromise<void>;
  /** firstresult — where a session's shell and file tools run, asked once per turn; nothing: the host. */
  provideSandbox(args: { sessionId: string; workspace: string }): MaybePromise<Sandbox | NoResult>;
}

/** Name of a hook. */
export type HookName = keyof BubHooks;
/** The argument object of hook `K`. */
export type HookArgs<K extends HookName> = Parameters<BubHooks[K]>[0];
/** What an implementation of hook `K` returns (possibly a promise). */
export type HookReturn<K extends HookName> = ReturnType<BubHooks[K]>;
/** The settled value of hook `K`. */
export type HookValue<K extends HookName> = Awaited<HookReturn<K>>;

/** The firstresult hooks called asynchronously, whose implementations get a `next` to call the ones below. */
export type ChainedHook = "resolveSession" | "buildPrompt" | "runModel" | "runModelStream" | "continuePrompt" | "admitMessage";

/**
 * The second argument of a {@link ChainedHook} implementation: runs the implementations
 * below this one (a lower plugin's, else the builtin's) with `args` (default: the same
 * arguments) and resolves with their answer, undefined when none answers. Call it at most
 * once; a second call rejects. Once called, the caller's own answer is final, even null.
 */
export type NextHook<K extends HookName> = (args?: HookArgs<K>) => Promise<HookValue<K> | undefined>;

/**
 * A plugin: an optional name plus any hook implementations. Each implementation receives
 * one argument object and may destructure only what it needs; implementations of
 * {@link ChainedHook}s also receive {@link NextHook} `next`.
 */
export type BubPlugin = { readonly name?: string } & {
  [K in HookName]?: K extends ChainedHook ? (args: HookArgs<K>, next: NextHook<K>) => HookReturn<K> : (args: HookArgs<K>) => HookReturn<K>;
};

/** A plugin module's default export may also be a factory receiving the framework. */
export type PluginFactory<F = unknown> = (framework: F) => BubPlugin | Promise<BubPlugin>;

/**
 * Declares a plugin with full type inference for every hook.
 *
 * ```ts
 * export default definePlugin({
 *   name: "shout",
 *   buildPrompt: ({ message }) => message.content.toUpperCase(),
 * });
 * ```
 */
export function definePlugin<const P extends BubPlugin>(plugin: P & Record<Exclude<keyof P, HookName | "name">, never>): P {
  return plugin;
}
