/** The LLM layer: provider registry, one streamed model call, one agent step. */
export { parseModelId, providerOf, type ModelRef } from "./model-id.ts";
export { DEFAULT_MAX_TOKENS, DEFAULT_MODEL, DEFAULT_MODEL_IDLE_TIMEOUT_SECONDS, defaultModelSettings, providerValue, type ModelSettings } from "./settings.ts";
export { CONNECT_TIMEOUT_MS, createModelTransport, type FetchFunction, type ModelTransport, type ModelTransportOptions } from "./transport.ts";
export {
  KNOWN_PROVIDERS,
  createLanguageModel,
  loadProviderModule,
  providerEnvName,
  resolveModelTarget,
  type ModelTarget,
  type ProviderFamily,
} from "./providers.ts";
export { MISSING_TOOL_RESULT, audioMimeType, toModelPrompt, withAnthropicCacheControl } from "./messages.ts";
export { normalizeUsage, type ProviderUsage } from "./usage.ts";
export {
  CONTEXT_LENGTH_PATTERN,
  allCandidatesFailedError,
  classifyModelError,
  isContextLengthError,
  isIdleTimeoutError,
  modelIdleTimeoutError,
  modelTimeoutError,
  retryAfterSeconds,
  type CandidateFailure,
  type ClassifyOptions,
} from "./errors.ts";
export type { ChatToolCall, ModelCallEvent, ModelCallRequest, ModelToolSpec } from "./model-call.ts";
export { completionCallOptions } from "./call-options.ts";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./model-retry.ts";
export { createModelClient, type ModelClient, type ModelClientOptions } from "./model-client.ts";
export { formatRunId, generateRunId } from "./run-id.ts";
export { stepRecordEntries, type StepEntry, type StepRecord } from "./step-record.ts";
export { runModelStep, type ModelStepOptions, type ModelStepOutcome, type ModelStepStream } from "./model-step.ts";
