/**
 * What a provider offers: its models endpoint (`GET <base>/models`, which OpenAI, OpenRouter,
 * Anthropic and OpenAI-compatible servers share, with their own auth headers), and the check
 * `,model` runs before a session switches to an id.
 */
import { BubError, describeError } from "../kernel/errors.ts";
import { parseModelId } from "./model-id.ts";
import { providerEnvName, resolveModelTarget, type ModelTarget } from "./providers.ts";
import { DEFAULT_MODEL, type ModelSettings } from "./settings.ts";
import type { FetchFunction } from "../http/request-fetch.ts";
import type { ModelCheck } from "../tools/runtime-agent.ts";

export type { ModelCheck };

/** Where each family's models endpoint lives when no base URL is configured. */
const DEFAULT_BASES: Record<ModelTarget["family"], string | null> = {
  openrouter: "https://openrouter.ai/api/v1",
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
  "openai-compatible": null,
};

const ANTHROPIC_VERSION = "2023-06-01";
/** Anthropic pages its list; more pages than this are not followed. */
const MAX_PAGES = 20;

function headersFor(target: ModelTarget): Record<string, string> {
  const args = target.clientArgs;
  const headers: Record<string, string> = {};
  for (const extra of [args.default_headers, args.headers]) {
    if (typeof extra === "object" && extra !== null) for (const [key, value] of Object.entries(extra)) headers[key] = String(value);
  }
  if (target.family === "anthropic") {
    headers["anthropic-version"] = ANTHROPIC_VERSION;
    if (target.apiKey) headers["x-api-key"] = target.apiKey;
  } else if (target.apiKey) {
    headers.authorization = `Bearer ${target.apiKey}`;
  }
  return headers;
}

/** The HTTP status of a failed listing, or null when the request itself failed. */
function statusOf(error: unknown): number | null {
  const status = BubError.isInstance(error) ? error.details?.status : undefined;
  return typeof status === "number" ? status : null;
}

/**
 * The model ids `provider` offers, sorted, from its models endpoint.
 *
 * ```ts
 * await listProviderModels("openai", settings, fetch); // ["gpt-4o", "gpt-4o-mini", ...]
 * ```
 *
 * @throws BubError `config` for an unknown provider or a missing or refused key (status
 *   401/403 in `details.status`), `not_found` when the provider has no models endpoint
 *   (404/405), `provider` for any other failure.
 */
export async function listProviderModels(
  provider: string,
  settings: ModelSettings,
  fetch: FetchFunction,
  options: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<string[]> {
  const target = resolveModelTarget(`${provider}:models`, settings, options.env ?? process.env);
  const base = (target.baseURL ?? DEFAULT_BASES[target.family])?.replace(/\/+$/, "");
  if (!base) throw new BubError("config", `Provider '${provider}' has no endpoint: set ${providerEnvName(provider, "API_BASE")} or BUB_API_BASE.`);
  const ids = new Set<string>();
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = target.family === "anthropic" ? `${base}/models?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ""}` : `${base}/models`;
    let response: Response;
    try {
      response = await fetch(url, { headers: headersFor(target), signal: options.signal });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new BubError("provider", `Cannot reach ${provider}'s models endpoint ${base}/models: ${describeError(error)}`, { cause: error, details: { provider } });
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      const details = { provider, status: response.status };
      if (response.status === 404 || response.status === 405) throw new BubError("not_found", `Provider '${provider}' does not list its models (GET ${base}/models answered ${response.status}).`, { details });
      if (response.status === 401 || response.status === 403) {
        throw new BubError("config", `Provider '${provider}' refused the API key (HTTP ${response.status}): check ${providerEnvName(provider, "API_KEY")} or BUB_API_KEY.`, { details });
      }
      throw new BubError("provider", `Provider '${provider}' answered HTTP ${response.status} to GET ${base}/models.`, { details });
    }
    const body: unknown = await response.json().catch(() => null);
    if (typeof body !== "object" || body === null || !("data" in body) || !Array.isArray(body.data)) throw new BubError("provider", `Provider '${provider}' sent a models list that is not '{"data": [...]}' (GET ${base}/models).`, { details: { provider } });
    for (const item of body.data) {
      const id = typeof item === "object" && item !== null && "id" in item ? item.id : undefined;
      if (typeof id === "string" && id !== "") ids.add(id);
    }
    if (target.family !== "anthropic" || !("has_more" in body) || body.has_more !== true || !("last_id" in body) || typeof body.last_id !== "string") break;
    after = body.last_id;
  }
  return [...ids].sort((left, right) => left.localeCompare(right));
}

/** Whether `listed` names `model` (Gemini lists `models/<name>`). */
function listedAs(listed: readonly string[], model: string): boolean {
  return listed.includes(model) || listed.includes(`models/${model}`);
}

/**
 * Checks a `provider:model` id before a session switches to it: the id parses, the provider
 * is known (or has a base URL) and has a key, and, when the provider lists its models, the
 * model is among them. The configured model, the fallbacks and the default model are accepted
 * without asking the provider. A provider without a models endpoint, or one that cannot be reached, does not
 * stop the switch: the result carries a `note` instead.
 */
export async function checkModelId(
  id: string,
  settings: ModelSettings,
  list: (provider: string) => Promise<string[]>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ModelCheck> {
  let target: ModelTarget;
  try {
    target = resolveModelTarget(parseModelId(id).id, settings, env);
  } catch (error) {
    return { status: "invalid", message: BubError.isInstance(error) ? error.message : describeError(error) };
  }
  const { ref } = target;
  // OpenRouter's routers (the default `openrouter/free`) need not appear in its list.
  const configured = [settings.model, ...(settings.fallback_models ?? []), DEFAULT_MODEL].map((candidate) => candidate.trim());
  if (configured.includes(ref.id)) return { status: "ok", id: ref.id };
  let available: string[];
  try {
    available = await list(ref.provider);
  } catch (error) {
    const status = statusOf(error);
    if (status === 401 || status === 403) return { status: "invalid", message: error instanceof Error ? error.message : String(error) };
    const why = BubError.isInstance(error) && error.kind === "not_found" ? `${ref.provider} does not list its models` : `the model list could not be read: ${describeError(error)}`;
    return { status: "ok", id: ref.id, note: `not checked: ${why}` };
  }
  if (available.length === 0 || listedAs(available, ref.model)) return { status: "ok", id: ref.id };
  return { status: "unknown_model", id: ref.id, provider: ref.provider, model: ref.model, available };
}
