/**
 * OpenAI-style chat messages (what the tape stores) → the AI SDK's provider prompt format
 * (`LanguageModelV4Prompt`, the standardized form of `ModelMessage`s).
 */
import type {
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4TextPart,
  LanguageModelV4ToolCallPart,
  LanguageModelV4ToolResultPart,
} from "@ai-sdk/provider";
import { createLogger } from "../kernel/log.ts";
import type { ChatMessage } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";

const log = createLogger("bub:llm");

/** The result text the model sees for a tool call whose result never reached the tape. */
export const MISSING_TOOL_RESULT = "[no tool result was recorded for this call]";

const AUDIO_MIME: Readonly<Record<string, string>> = {
  aiff: "audio/aiff",
  flac: "audio/flac",
  m4a: "audio/mp4",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
  wav: "audio/wav",
  webm: "audio/webm",
};

/** Audio format (`mp3`) → MIME type (`audio/mpeg`); unknown formats become `audio/<format>`. */
export function audioMimeType(format: string): string {
  const key = format.trim().toLowerCase();
  return AUDIO_MIME[key] ?? `audio/${key}`;
}

type UserPart = LanguageModelV4TextPart | LanguageModelV4FilePart;

function textOf(content: unknown): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (isRecord(part) && part.type === "text" && typeof part.text === "string" ? part.text : ""))
      .join("");
  }
  return JSON.stringify(content);
}

/** A `data:` URL split into media type and base64 payload, or null. */
function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const match = /^data:([^;,]+)?((?:;[^;,]*)*?);base64,(.*)$/s.exec(url);
  if (!match) return null;
  return { mediaType: match[1] ?? "application/octet-stream", base64: match[3] };
}

function filePart(url: string, fallbackMediaType: string): LanguageModelV4FilePart | null {
  const data = parseDataUrl(url);
  if (data) return { type: "file", mediaType: data.mediaType, data: { type: "data", data: data.base64 } };
  try {
    return { type: "file", mediaType: fallbackMediaType, data: { type: "url", url: new URL(url) } };
  } catch {
    return null;
  }
}

function urlOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (isRecord(value) && typeof value.url === "string") return value.url;
  return null;
}

/** One OpenAI content part → AI SDK part; unsupported parts are skipped with a debug log. */
function convertUserPart(part: unknown): UserPart | null {
  if (typeof part === "string") return { type: "text", text: part };
  if (!isRecord(part)) return null;
  switch (part.type) {
    case "text":
      return { type: "text", text: typeof part.text === "string" ? part.text : String(part.text ?? "") };
    case "image_url": {
      const url = urlOf(part.image_url);
      return url ? filePart(url, "image") : null;
    }
    case "video_url": {
      const url = urlOf(part.video_url);
      return url ? filePart(url, "video") : null;
    }
    case "input_audio": {
      const audio = part.input_audio;
      if (!isRecord(audio) || typeof audio.data !== "string") return null;
      const format = typeof audio.format === "string" ? audio.format : "wav";
      return { type: "file", mediaType: audioMimeType(format), data: { type: "data", data: audio.data } };
    }
    case "file": {
      const file = part.file;
      if (!isRecord(file) || typeof file.file_data !== "string") return null;
      const converted = filePart(file.file_data, "application/octet-stream");
      if (converted && typeof file.filename === "string") converted.filename = file.filename;
      return converted;
    }
    default:
      log.debug(`messages.unsupported_part type=${String(part.type)}`);
      return null;
  }
}

function userContent(content: unknown): UserPart[] {
  if (Array.isArray(content)) {
    const parts = content.map(convertUserPart).filter((part): part is UserPart => part !== null);
    return parts.length > 0 ? parts : [{ type: "text", text: "" }];
  }
  return [{ type: "text", text: textOf(content) }];
}

/** Tool-call arguments for the prompt: the decoded object, or `{}` when they are not a JSON object. */
function toolInput(raw: unknown): unknown {
  if (isRecord(raw)) return raw;
  if (typeof raw !== "string" || raw.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function toolResultPart(toolCallId: string, toolName: string, content: unknown): LanguageModelV4ToolResultPart {
  const value = typeof content === "string" ? content : content === undefined || content === null ? "" : JSON.stringify(content);
  return { type: "tool-result", toolCallId, toolName, output: { type: "text", value } };
}

/**
 * Converts OpenAI chat messages to the AI SDK prompt.
 *
 * - `system`/`developer` → system; `user` content strings and parts (`text`, `image_url`,
 *   `video_url`, `input_audio`, `file`) → text and file parts;
 * - `assistant` text and `tool_calls` → text and tool-call parts;
 * - consecutive `tool` messages → one tool message of tool-result parts.
 *
 * The history is repaired rather than rejected, so one bad entry cannot wedge a session:
 * a tool call without a recorded result gets {@link MISSING_TOOL_RESULT}, and a tool result
 * that answers no call becomes a user note.
 */
export function toModelPrompt(messages: readonly ChatMessage[]): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Message[] = [];
  /** Calls of the latest assistant message still waiting for a result: id → name. */
  let open = new Map<string, string>();
  const closeOpenCalls = () => {
    if (open.size === 0) return;
    const last = prompt[prompt.length - 1];
    const parts = [...open].map(([id, name]) => toolResultPart(id, name, MISSING_TOOL_RESULT));
    if (last?.role === "tool") last.content.push(...parts);
    else prompt.push({ role: "tool", content: parts });
    open = new Map();
  };

  for (const message of messages) {
    const role = message.role;
    if (role === "tool") {
      const id = typeof message.tool_call_id === "string" ? message.tool_call_id : "";
      const openName = open.get(id);
      if (openName === undefined) {
        closeOpenCalls();
        const name = typeof message.name === "string" ? ` from '${message.name}'` : "";
        prompt.push({ role: "user", content: [{ type: "text", text: `[tool result${name} without a matching call]\n${textOf(message.content)}` }] });
        continue;
      }
      const name = typeof message.name === "string" && message.name ? message.name : openName;
      open.delete(id);
      const part = toolResultPart(id, name, message.content);
      const last = prompt[prompt.length - 1];
      if (last?.role === "tool") last.content.push(part);
      else prompt.push({ role: "tool", content: [part] });
      continue;
    }
    closeOpenCalls();
    if (role === "system" || role === "developer") {
      prompt.push({ role: "system", content: textOf(message.content) });
    } else if (role === "assistant") {
      const content: (LanguageModelV4TextPart | LanguageModelV4ToolCallPart)[] = [];
      const text = textOf(message.content);
      if (text) content.push({ type: "text", text });
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      calls.forEach((call: unknown, index: number) => {
        if (!isRecord(call)) return;
        const fn = isRecord(call.function) ? call.function : {};
        const id = typeof call.id === "string" && call.id ? call.id : `call_${index}`;
        const name = typeof fn.name === "string" ? fn.name : "";
        content.push({ type: "tool-call", toolCallId: id, toolName: name, input: toolInput(fn.arguments) });
        open.set(id, name);
      });
      prompt.push({ role: "assistant", content: content.length > 0 ? content : [{ type: "text", text: "" }] });
    } else {
      prompt.push({ role: "user", content: userContent(message.content) });
    }
  }
  closeOpenCalls();
  return prompt;
}

const EPHEMERAL = { anthropic: { cacheControl: { type: "ephemeral" } } } as const;

/**
 * Marks prompt-cache breakpoints for Anthropic: the system prompt and the last two
 * messages (Anthropic allows four), so the stable prefix of a growing conversation is
 * read from the cache on the next call.
 */
export function withAnthropicCacheControl(prompt: LanguageModelV4Prompt): LanguageModelV4Prompt {
  const marked = prompt.map((message) => ({ ...message }));
  const system = marked.find((message) => message.role === "system");
  if (system) system.providerOptions = { ...system.providerOptions, ...EPHEMERAL };
  let remaining = 2;
  for (let index = marked.length - 1; index >= 0 && remaining > 0; index--) {
    const message = marked[index];
    if (message.role === "system") continue;
    message.providerOptions = { ...message.providerOptions, ...EPHEMERAL };
    remaining--;
  }
  return marked;
}
