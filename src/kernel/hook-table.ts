/**
 * The hook table: for every hook of {@link BubHooks}, how its implementations combine,
 * whether a failure fails the turn, and what an answer must be. `HookRuntime.call` reads
 * it; call sites never choose how a hook is called.
 */
import { AsyncStreamEvents, collectText } from "./stream.ts";
import { toEnvelope, unpackBatch, type Envelope } from "./envelope.ts";
import { isAdmitDecision, type ModelOptions } from "./types.ts";
import { mergeLoadedStates } from "./turn-context.ts";
import { isTapeContext } from "./tape-contract.ts";
import type { Sandbox } from "./sandbox.ts";
import { createLogger } from "./log.ts";
import type { LlmCallDecision, LlmCallRequest, ToolCallDecision } from "./interception.ts";
import { mergeConfig } from "./settings-contract.ts";
import { isRecord } from "./guards.ts";
import type { ChainedHook, HookArgs, HookName, HookValue, NoResult, OutboundInit } from "./hooks.ts";

const log = createLogger("bub:hooks");

/**
 * How the implementations of a hook combine, each awaited in call order (the plugin
 * registered last first):
 * - `first`: the first answer that is not null/undefined;
 * - `chain`: the same, and each implementation gets `next()` to call the ones below it;
 * - `all`: every answer, in call order (or what `reduce` makes of them);
 * - `settled`: every implementation runs even when one throws; the call answers the errors;
 * - `fold`: each answer changes the arguments the next implementation gets, until one stops it;
 * - `observe`: every implementation runs; answers are ignored.
 */
export type Combine = "first" | "chain" | "all" | "settled" | "fold" | "observe";

/** What an answer must be: `is` says whether it is; `expected` ends the `TypeError` (`hook.x must return <expected>`). */
export interface AnswerCheck<T = unknown> {
  readonly is: (answer: unknown) => answer is T;
  readonly expected: string;
}

/** A check that also lets "no answer" (null, undefined) through. */
function orNone<T>(is: (answer: unknown) => answer is T, expected: string): AnswerCheck<T | null | undefined> {
  return { is: (answer): answer is T | null | undefined => answer === null || answer === undefined || is(answer), expected: `${expected} or null` };
}

/** Deduplicated by name, the first (highest-precedence) one winning. */
const firstByName = <T extends { readonly name: string }>(items: readonly T[]): T[] => items.filter((item, index) => items.findIndex((other) => other.name === item.name) === index);
const isString = (answer: unknown): answer is string => typeof answer === "string";
const isModelOptions = (answer: unknown): answer is ModelOptions => isRecord(answer) && Array.isArray(answer.models);
const isLlmCallRequest = (answer: unknown): answer is LlmCallRequest => isRecord(answer) && typeof answer.model === "string" && Array.isArray(answer.messages);
const isFinish = (answer: unknown): answer is LlmCallDecision => isRecord(answer) && answer.action === "finish" && typeof answer.text === "string";
const isToolCallDecision = (answer: unknown): answer is ToolCallDecision => isRecord(answer) && (answer.action === "proceed" || answer.action === "replace" || answer.action === "deny");
const isSandbox = (answer: unknown): answer is Sandbox => isRecord(answer) && typeof answer.exec === "function" && typeof answer.resolvePath === "function";
/** Rendered batches flattened and made envelopes; when nothing rendered, the model output to the inbound's chat. */
function outboundsOf(answers: readonly (OutboundInit | OutboundInit[] | NoResult)[], { message, sessionId, modelOutput }: HookArgs<"renderOutbound">): Envelope[] {
  const outbounds = answers.flatMap((batch) => unpackBatch(batch)).map(toEnvelope);
  return outbounds.length > 0 ? outbounds : [{ content: modelOutput, sessionId, channel: message.channel, chatId: message.chatId, kind: "normal", media: [], context: {} }];
}

/** A hook's declaration, as the runtime reads it. */
export interface RunSpec {
  readonly combine: Combine;
  /** Called synchronously (`callSync`): a Promise answer counts as none, with `hook.async_not_supported`. */
  readonly sync?: true;
  /** True: an exception, or an answer failing `check`, ends the call (and the turn). False: it is logged and counts as no answer. */
  readonly failsTurn: boolean;
  /** `registration`: the plugin registered first runs first. */
  readonly order?: "registration";
  /** Checked on the result of `first`/`chain`, on every answer of `all`/`fold`. */
  readonly check?: AnswerCheck;
  /** `fold`: the next implementation's arguments after `answer` (never null); undefined: `answer` is final. */
  fold?(args: unknown, answer: unknown): unknown;
  /** `all`: what the call answers, made of the answers in call order (and the call's arguments, and the plugin that gave each answer). */
  reduce?(answers: readonly unknown[], args: unknown, plugins: readonly string[]): unknown;
  /** For a hook that does not fail the turn: what its failure warning names (default `agent_hook_failed hook=<name>`). */
  failure?(args: unknown): string;
}

/** The declaration of hook `K`: only the hooks whose implementations get `next()` ({@link ChainedHook}) chain. */
export type HookSpec<K extends HookName = HookName> = Omit<RunSpec, "combine" | "fold" | "reduce" | "failure"> & {
  readonly combine: K extends ChainedHook ? "chain" : Exclude<Combine, "chain">;
  fold?(args: HookArgs<K>, answer: HookValue<K>): HookArgs<K> | undefined;
  reduce?(answers: readonly HookValue<K>[], args: HookArgs<K>, plugins: readonly string[]): unknown;
  failure?(args: HookArgs<K>): string;
};

/** The hook table. A hook of {@link BubHooks} left out, or one that is not there, is a compile error. */
export const HOOK_TABLE = {
  resolveSession: { combine: "chain", failsTurn: true },
  buildPrompt: { combine: "chain", failsTurn: true },
  // Only runModelStream is called: the runtime adapts each runModel implementation into it.
  runModel: { combine: "chain", failsTurn: true, check: orNone(isString, "string") },
  runModelStream: { combine: "chain", failsTurn: true, check: orNone(AsyncStreamEvents.isInstance, "AsyncStreamEvents") },
  continuePrompt: { combine: "chain", failsTurn: true, check: { is: isString, expected: "string" } },
  // Merged, higher precedence winning a key.
  loadState: { combine: "all", failsTurn: true, reduce: (answers, _args, plugins) => mergeLoadedStates(answers, plugins) },
  saveState: { combine: "settled", failsTurn: false },
  renderOutbound: { combine: "all", failsTurn: true, reduce: outboundsOf },
  dispatchOutbound: { combine: "settled", failsTurn: false },
  registerCliCommands: { combine: "observe", sync: true, failsTurn: true },
  // Deep-merged into the config the next plugin sees.
  onboardConfig: { combine: "fold", sync: true, failsTurn: true, order: "registration", check: orNone(isRecord, "an object"), fold: (args, answer) => (mergeConfig(args.currentConfig, answer), args) },
  // Lists concatenated, the highest-precedence plugin's first; the first current model named.
  provideModelOptions: {
    combine: "all",
    failsTurn: true,
    check: orNone(isModelOptions, "ModelOptions"),
    reduce: (answers): ModelOptions => ({ models: answers.flatMap((options) => options?.models ?? []), currentModel: answers.find((options) => options?.currentModel)?.currentModel ?? null }),
  },
  onError: { combine: "observe", failsTurn: false, failure: ({ stage }) => `on_error_failed stage=${stage}` },
  // A request replaces the request later plugins see; finish() is final.
  beforeLlmCall: {
    combine: "fold",
    failsTurn: false,
    check: { is: (answer) => isFinish(answer) || isLlmCallRequest(answer), expected: "LlmCallRequest or LlmCallDecision" },
    fold: (args, answer) => (isLlmCallRequest(answer) ? { ...args, request: answer } : undefined),
  },
  afterLlmCall: { combine: "observe", failsTurn: false },
  // proceed(args) replaces the arguments later plugins and the tool see; replace/deny are final.
  beforeToolCall: {
    combine: "fold",
    failsTurn: false,
    check: { is: isToolCallDecision, expected: "ToolCallDecision" },
    fold: (args, answer) => (answer?.action !== "proceed" ? undefined : answer.arguments ? { ...args, call: { ...args.call, arguments: { ...answer.arguments } } } : args),
  },
  afterToolCall: { combine: "observe", failsTurn: false },
  // Joined by a blank line, lowest precedence first; empty fragments left out.
  systemPrompt: { combine: "all", sync: true, failsTurn: true, reduce: (answers) => answers.filter((part) => typeof part === "string" && part.length > 0).reverse().join("\n\n") },
  provideTapeStore: { combine: "first", sync: true, failsTurn: true },
  provideTapeSidecar: { combine: "all", sync: true, failsTurn: true, reduce: (answers) => firstByName(answers.flatMap((each) => (each ? [each] : []))) },
  // Map order is precedence.
  provideChannels: { combine: "all", sync: true, failsTurn: true, reduce: (answers) => new Map(firstByName(answers.flatMap((batch) => batch ?? [])).map((channel) => [channel.name, channel])) },
  buildTapeContext: { combine: "first", sync: true, failsTurn: true, check: { is: isTapeContext, expected: "TapeContext" } },
  admitMessage: { combine: "chain", failsTurn: true, check: orNone(isAdmitDecision, "AdmitDecision") },
  provideSteeringInbox: { combine: "first", sync: true, failsTurn: true },
  provideSandbox: { combine: "first", failsTurn: true, check: { ...orNone(isSandbox, "Sandbox"), expected: "a Sandbox or null" } },
  askApproval: { combine: "first", failsTurn: true },
  quitSession: { combine: "observe", failsTurn: true },
} satisfies { [K in HookName]: HookSpec<K> };

/** A hook of the table. */
export type TableHook = keyof typeof HOOK_TABLE;
/** The table's hooks called with `HookRuntime.callSync`. */
export type SyncHook = { [K in TableHook]: (typeof HOOK_TABLE)[K] extends { sync: true } ? K : never }[TableHook];
/** The table's hooks called with `HookRuntime.call`. */
export type AsyncHook = Exclude<TableHook, SyncHook>;

type Spec<K extends TableHook> = (typeof HOOK_TABLE)[K];

/**
 * What `HookRuntime.call(K)` answers: the first answer, as its check narrows it (`first`,
 * `chain`); every answer, or what the table reduces them to (`all`); the errors (`settled`);
 * the final arguments and the answer that stopped the fold, if one did (`fold`); nothing
 * (`observe`).
 */
export type HookResult<K extends TableHook> = Spec<K> extends { reduce(answers: never, args: never, plugins: never): infer R } ? R
  : Spec<K>["combine"] extends "first" | "chain" ? (Spec<K> extends { check: AnswerCheck<infer T> } ? T : HookValue<K> | undefined)
  : Spec<K>["combine"] extends "all" ? (HookValue<K> | undefined)[]
  : Spec<K>["combine"] extends "settled" ? unknown[]
  : Spec<K>["combine"] extends "fold" ? { args: HookArgs<K>; answer: NonNullable<HookValue<K>> | undefined }
  : void;

/** Every hook name the runtime knows, in the table's order. */
export const HOOK_NAMES: readonly HookName[] = Object.keys(HOOK_TABLE).filter((name): name is HookName => name in HOOK_TABLE);

/** The hooks called synchronously: their implementations must not return a Promise. */
export const SYNC_HOOKS: readonly HookName[] = HOOK_NAMES.filter((name) => "sync" in HOOK_TABLE[name]);

/**
 * `runModel` as the model hook `runModelStream` (the runtime adapts each implementation with
 * it, the one place): the `next()` it gets answers the text of the stream below, and its
 * text answer becomes one `text` event.
 */
export const textModel = {
  next: (next: (args?: unknown) => Promise<unknown>) => async (args?: unknown): Promise<unknown> => {
    const stream = await next(args);
    return AsyncStreamEvents.isInstance(stream) ? collectText(stream) : stream;
  },
  answer: (text: unknown): unknown => {
    checkAnswer("runModel", HOOK_TABLE.runModel, text);
    return typeof text === "string" ? AsyncStreamEvents.of([{ kind: "text", data: { delta: text } }]) : text;
  },
};

/** Throws the hook's `TypeError` unless `answer` passes its spec's check. */
export function checkAnswer(name: string, spec: RunSpec, answer: unknown): void {
  if (spec.check && !spec.check.is(answer)) throw new TypeError(`hook.${name} must return ${spec.check.expected}`);
}

/** The answers of one call of hook `name`, combined as its spec says (the runtime feeds it). */
export class Combination {
  /** The arguments the next implementation gets (a fold changes them). */
  args: unknown;
  readonly name: string;
  readonly spec: RunSpec;
  readonly #answers: unknown[] = [];
  /** The plugin that gave each of {@link #answers}. */
  readonly #plugins: string[] = [];
  #final: unknown = undefined;

  constructor(name: string, spec: RunSpec, args: unknown) {
    this.name = name;
    this.spec = spec;
    this.args = args;
  }

  /** Takes one implementation's answer; true when the call has its result and the rest are not called. */
  take(value: unknown, plugin: string): boolean {
    const { name, spec } = this;
    if (spec.combine === "all") {
      checkAnswer(name, spec, value);
      this.#answers.push(value);
      this.#plugins.push(plugin);
    }
    if (value === null || value === undefined || (spec.combine !== "first" && spec.combine !== "fold")) return false;
    if (spec.combine === "fold" && spec.check && !spec.check.is(value)) {
      if (spec.failsTurn) checkAnswer(name, spec, value);
      log.warn(`hook.agent_hook_bad_return hook=${name} adapter=${plugin}`);
      return false;
    }
    // `first` stops at this answer; a fold when its step says the answer is final.
    const args = spec.fold?.(this.args, value);
    if (args === undefined) this.#final = value;
    else this.args = args;
    return args === undefined;
  }

  /** An implementation threw (`error` blamed on it already): rethrown when the hook fails the turn, else kept or logged (no answer). */
  failed(error: unknown, plugin: string): undefined {
    if (this.spec.failsTurn) throw error;
    if (this.spec.combine === "settled") this.#answers.push(error);
    else log.warn(`hook.${this.spec.failure?.(this.args) ?? `agent_hook_failed hook=${this.name}`} adapter=${plugin}`, error);
    return undefined;
  }

  /** What the call answers (see {@link HookResult}). */
  result(): unknown {
    const { combine, reduce } = this.spec;
    if (combine === "all") return reduce ? reduce(this.#answers, this.args, this.#plugins) : this.#answers;
    if (combine === "settled") return this.#answers;
    if (combine === "fold") return { args: this.args, answer: this.#final };
    if (combine === "observe") return undefined;
    checkAnswer(this.name, this.spec, this.#final);
    return this.#final;
  }
}
