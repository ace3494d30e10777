/**
 * A model call's request in the AI SDK's terms: the prompt, the tools, the token limit, and
 * `completion_args` with the reasoning effort turned into call settings and provider options.
 */
import type { JSONObject, JSONValue, LanguageModelV4CallOptions, LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import { createLogger } from "../kernel/log.ts";
import { toModelPrompt, withAnthropicCacheControl } from "./messages.ts";
import { isGeminiProvider, markGeminiMedia } from "./gemini-media.ts";
import type { ModelCallRequest } from "./model-call.ts";
import type { ModelTarget } from "./providers.ts";
import type { ModelSettings } from "./settings.ts";
import { isRecord } from "../kernel/guards.ts";

const log = createLogger("bub:llm");

type ReasoningLevel = NonNullable<LanguageModelV4CallOptions["reasoning"]>;

const REASONING_LEVELS: ReadonlySet<string> = new Set<ReasoningLevel>(["provider-default", "none", "minimal", "low", "medium", "high", "xhigh", "max"]);

function isReasoningLevel(value: string): value is ReasoningLevel {
  return REASONING_LEVELS.has(value);
}

/** The call settings that take a number. */
type NumberSetting = "temperature" | "topP" | "topK" | "presencePenalty" | "frequencyPenalty" | "seed";

const NUMBER_SETTINGS: Readonly<Record<string, NumberSetting>> = {
  temperature: "temperature",
  top_p: "topP",
  topP: "topP",
  top_k: "topK",
  topK: "topK",
  presence_penalty: "presencePenalty",
  presencePenalty: "presencePenalty",
  frequency_penalty: "frequencyPenalty",
  frequencyPenalty: "frequencyPenalty",
  seed: "seed",
};

const STOP_KEYS = new Set(["stop", "stopSequences"]);

/** Keys the runtime manages itself; a value in `completion_args` is ignored. */
const MANAGED = new Set(["model", "messages", "tools", "stream", "stream_options", "max_tokens", "max_completion_tokens", "maxOutputTokens"]);

/** True for what JSON can hold: null, strings, finite numbers, booleans, and lists and mappings of them. */
function isJsonValue(value: unknown): value is JSONValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isJsonObject(value);
}

function isJsonObject(value: unknown): value is JSONObject {
  return isRecord(value) && Object.values(value).every((item) => item === undefined || isJsonValue(item));
}

/**
 * `completion_args` and the reasoning effort → call settings and `providerOptions`.
 * Standard sampling keys map to AI SDK settings; `providerOptions` is merged as given;
 * `extra_body` and every other key go to this provider's options (OpenAI-compatible
 * servers and OpenRouter put them in the request body verbatim).
 */
export function completionCallOptions(
  completionArgs: Readonly<Record<string, unknown>>,
  target: Pick<ModelTarget, "family" | "optionsKey">,
  reasoningEffort: string | null | undefined,
): Partial<LanguageModelV4CallOptions> {
  const options: Partial<LanguageModelV4CallOptions> = {};
  const ownOptions: JSONObject = {};
  const providerOptions: Record<string, JSONObject> = {};
  const own = (key: string, value: unknown) => {
    if (value === undefined) return;
    if (isJsonValue(value)) ownOptions[key] = value;
    else log.warn(`model.completion_arg_ignored key=${key}: not a JSON value`);
  };
  for (const [key, value] of Object.entries(completionArgs)) {
    if (value === undefined || MANAGED.has(key) || key === "reasoning_effort") continue;
    const setting = NUMBER_SETTINGS[key];
    if (setting) {
      if (typeof value === "number") options[setting] = value;
      else log.warn(`model.completion_arg_ignored key=${key}: expected a number`);
    } else if (STOP_KEYS.has(key)) {
      if (typeof value === "string") options.stopSequences = [value];
      else if (Array.isArray(value) && value.every((item): item is string => typeof item === "string")) options.stopSequences = value;
      else log.warn(`model.completion_arg_ignored key=${key}: expected a string or a list of strings`);
    } else if (key === "providerOptions" && isRecord(value)) {
      for (const [provider, entry] of Object.entries(value)) if (isJsonObject(entry)) providerOptions[provider] = { ...providerOptions[provider], ...entry };
    } else if (key === "extra_body" && isRecord(value)) {
      for (const [name, item] of Object.entries(value)) own(name, item);
    } else own(key, value);
  }
  const effortValue = reasoningEffort ?? completionArgs.reasoning_effort;
  const effort = typeof effortValue === "string" ? effortValue.trim() : "";
  if (effort && effort !== "auto") {
    if (isReasoningLevel(effort)) options.reasoning = effort;
    else if (target.family === "openai-compatible") ownOptions.reasoningEffort = effort;
    else log.warn(`model.reasoning_effort_unsupported effort=${effort} provider=${target.optionsKey}`);
  }
  if (Object.keys(ownOptions).length > 0) providerOptions[target.optionsKey] = { ...ownOptions, ...providerOptions[target.optionsKey] };
  if (Object.keys(providerOptions).length > 0) options.providerOptions = providerOptions;
  return options;
}

/**
 * The AI SDK options of one attempt at `request` on `target`: the messages as its prompt
 * (with Anthropic cache breakpoints), the tools, `maxTokens` or the settings' `max_tokens`,
 * and {@link completionCallOptions}.
 */
export function buildCallOptions(request: ModelCallRequest, target: ModelTarget, settings: ModelSettings, abortSignal: AbortSignal): LanguageModelV4CallOptions {
  const basePrompt = toModelPrompt(request.messages);
  const prompt = target.family === "anthropic" ? withAnthropicCacheControl(basePrompt) : isGeminiProvider(target.ref.provider) && target.family === "openai-compatible" ? markGeminiMedia(basePrompt) : basePrompt;
  const tools: LanguageModelV4FunctionTool[] = (request.tools ?? []).map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters,
  }));
  const maxTokens = request.maxTokens ?? settings.max_tokens;
  const options = completionCallOptions(settings.completion_args ?? {}, target, request.reasoningEffort);
  return {
    ...options,
    prompt,
    ...(maxTokens ? tokenLimit(maxTokens, target, options.providerOptions) : {}),
    ...(tools.length > 0 ? { tools } : {}),
    abortSignal,
  };
}

/**
 * The answer's token limit. OpenAI's own chat endpoint (provider `openai` with a base URL,
 * as in the reference) gets `max_completion_tokens`, the field every current OpenAI chat
 * model accepts; every other provider gets the SDK's `maxOutputTokens` (`max_tokens` on
 * chat-completions servers, `max_output_tokens` on OpenAI's Responses API).
 */
function tokenLimit(maxTokens: number, target: Pick<ModelTarget, "family" | "baseURL">, providerOptions: LanguageModelV4CallOptions["providerOptions"]): Partial<LanguageModelV4CallOptions> {
  if (target.family !== "openai" || !target.baseURL) return { maxOutputTokens: maxTokens };
  return { providerOptions: { ...providerOptions, openai: { ...providerOptions?.openai, maxCompletionTokens: maxTokens } } };
}
