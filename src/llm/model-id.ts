import { BubError } from "../kernel/errors.ts";

/** A `provider:model` id split into its parts. */
export interface ModelRef {
  /** The full id as configured, e.g. `openrouter:openrouter/free`. */
  readonly id: string;
  /** Provider id, lower-cased, e.g. `openrouter`. */
  readonly provider: string;
  /** The provider's own model id, e.g. `openrouter/free`. */
  readonly model: string;
}

/**
 * Splits a model id at the first `:` or `/`, whichever comes first.
 *
 * ```ts
 * parseModelId("openrouter:openrouter/free"); // { provider: "openrouter", model: "openrouter/free" }
 * parseModelId("openai/gpt-4o");              // { provider: "openai", model: "gpt-4o" }
 * ```
 *
 * @throws BubError `config` when either part is missing.
 */
export function parseModelId(id: string): ModelRef {
  const trimmed = id.trim();
  const match = /[:/]/.exec(trimmed);
  const provider = match ? trimmed.slice(0, match.index).trim() : "";
  const model = match ? trimmed.slice(match.index + 1).trim() : "";
  if (!provider || !model) {
    throw new BubError("config", `Invalid model '${id}': expected 'provider:model', e.g. 'openrouter:openrouter/free'. Set BUB_MODEL or run \`bub onboard\`.`);
  }
  return { id: trimmed, provider: provider.toLowerCase(), model };
}

/** The provider id of a `provider:model` id, or null when it is malformed. */
export function providerOf(model: string): string | null {
  try {
    return parseModelId(model).provider;
  } catch {
    return null;
  }
}
