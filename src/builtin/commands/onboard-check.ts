/**
 * `bub onboard`'s check of the model answers: one short request to the configured model
 * (at most {@link CHECK_MAX_TOKENS} tokens, no retries, no fallbacks) through the same
 * settings resolution and model client as a turn, so a wrong key, model id or base URL shows
 * up before the config is saved.
 */
import type { ModelSettings } from "../../llm/settings.ts";

/**
 * The answer's token limit: small, but not 1, since OpenAI's Responses API refuses limits
 * below 16.
 */
export const CHECK_MAX_TOKENS = 16;

/** How long the check waits for the model, in milliseconds. */
export const CHECK_TIMEOUT_MS = 30_000;

/** What was checked, and what failed (null: the model answered). */
export interface ModelCheck {
  readonly model: string;
  readonly problem: string | null;
}

/**
 * Calls the model `config` (a whole config file's data, `${NAME}` references included)
 * selects, with `env` over it as at run time, and reports whether it answered.
 */
export async function checkModel(config: Record<string, unknown>, env: NodeJS.ProcessEnv, options: { path?: string; timeoutMs?: number } = {}): Promise<ModelCheck> {
  const [{ Settings }, { agentSettings }, { createModelClient }, { describeError }] = await Promise.all([
    import("../../config/settings.ts"),
    import("../settings.ts"),
    import("../../llm/model-client.ts"),
    import("../../kernel/errors.ts"),
  ]);
  let model = typeof config.model === "string" ? config.model : "";
  let settings: ModelSettings;
  try {
    const store = new Settings({ path: options.path ?? "config.yml", data: config, lineOf: () => null }, env, { warnMissing: false });
    settings = await store.load(agentSettings);
    model = settings.model;
  } catch (error) {
    return { model, problem: describeError(error) };
  }
  const client = createModelClient({ ...settings, fallback_models: null }, { env, retry: { maxAttempts: 1 } });
  const timeoutMs = options.timeoutMs ?? CHECK_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const stream = client.stream({ model, messages: [{ role: "user", content: "Reply with the word ok." }], maxTokens: CHECK_MAX_TOKENS, signal });
    for await (const event of stream) if (event.type === "finish") break;
    return { model, problem: null };
  } catch (error) {
    if (signal.aborted) return { model, problem: `no answer within ${Math.round(timeoutMs / 1000)} s` };
    return { model, problem: describeError(error) };
  } finally {
    await client.close();
  }
}
