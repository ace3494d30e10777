/**
 * An envelope is whatever a channel hands the runtime: usually a plain object or a
 * `ChannelMessage`, but any value is accepted. Read it with {@link fieldOf} and
 * {@link contentOf} rather than assuming a shape.
 */
export type Envelope = unknown;

/** A prompt: plain text, or a list of content parts (text, images, audio). */
export type Prompt = string | PromptPart[];

/** One content part of a multimodal prompt, in the OpenAI chat shape. */
export type PromptPart = { type: string; [key: string]: unknown };

const camelCases = new Map<string, string>();

function camelCase(key: string): string {
  let alias = camelCases.get(key);
  if (alias === undefined) {
    alias = key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
    if (camelCases.size < 1024) camelCases.set(key, alias);
  }
  return alias;
}

/**
 * Reads `key` from an envelope: a property of an object (or its camelCase alias, so
 * `fieldOf(m, "session_id")` also finds `m.sessionId`), else `fallback`.
 *
 * ```ts
 * fieldOf({ chat_id: "42" }, "chat_id"); // "42"
 * ```
 */
export function fieldOf(envelope: Envelope, key: string, fallback?: unknown): unknown {
  if (typeof envelope !== "object" || envelope === null) return fallback;
  const record = envelope as Record<string, unknown>;
  if (record[key] !== undefined) return record[key];
  const alias = camelCase(key);
  if (alias !== key && record[alias] !== undefined) return record[alias];
  return fallback;
}

/** The text content of an envelope as a string (`""` when it has none; `123` → `"123"`). */
export function contentOf(envelope: Envelope): string {
  const content = fieldOf(envelope, "content", "");
  return typeof content === "string" ? content : String(content ?? "");
}

/**
 * A plain-object copy of an envelope: objects are shallow-copied (own enumerable fields),
 * anything else becomes `{ content: String(value) }`.
 */
export function normalizeEnvelope(envelope: Envelope): Record<string, unknown> {
  if (typeof envelope === "object" && envelope !== null && !Array.isArray(envelope)) {
    return { ...(envelope as Record<string, unknown>) };
  }
  return { content: String(envelope) };
}

/** Flattens a hook's outbound result: nothing → `[]`, an array → its items, else `[value]`. */
export function unpackBatch(batch: Envelope | readonly Envelope[] | null | undefined): Envelope[] {
  if (batch === null || batch === undefined) return [];
  if (Array.isArray(batch)) return [...batch];
  return [batch];
}

/** True when a prompt carries nothing: `""`, `[]`, `null` or `undefined`. */
export function isEmptyPrompt(prompt: unknown): boolean {
  return prompt === null || prompt === undefined || prompt === "" || (Array.isArray(prompt) && prompt.length === 0);
}
