/**
 * Audio and video sent to Gemini models, as the reference runtime sends them: Gemini's
 * OpenAI-compatible endpoint takes them as `file` parts holding a data URL
 * (`{"type": "file", "file": {"file_data": "data:video/mp4;base64,..."}}`), not as the
 * `video_url` and `input_audio` parts other OpenAI-compatible servers get.
 *
 * Two steps, because the AI SDK's OpenAI-compatible converter sits between them:
 * {@link markGeminiMedia} prepares the prompt (audio in a format the converter does not
 * know travels as `wav` with its real media type beside it), and
 * {@link geminiMediaBody} rewrites the request body's parts.
 */
import type { LanguageModelV4FilePart, LanguageModelV4Prompt } from "@ai-sdk/provider";
import { isRecord } from "../kernel/guards.ts";

/** Provider ids whose models get {@link geminiMediaBody}. */
const GEMINI_PROVIDERS = new Set(["gemini", "vertex", "vertex_ai", "vertexai"]);

/** The part key carrying an audio part's real media type through the SDK's converter. */
const MEDIA_TYPE_KEY = "bub_media_type";

/** Whether `provider` serves Gemini models (their media parts are converted). */
export function isGeminiProvider(provider: string): boolean {
  return GEMINI_PROVIDERS.has(provider.toLowerCase());
}

/**
 * The prompt with every inline audio part marked with its media type (sent as `wav`, so
 * the converter accepts any format; {@link geminiMediaBody} restores the type). Other
 * parts are unchanged.
 */
export function markGeminiMedia(prompt: LanguageModelV4Prompt): LanguageModelV4Prompt {
  return prompt.map((message) => {
    if (message.role !== "user") return message;
    const content = message.content.map((part) => {
      if (part.type !== "file" || part.data.type !== "data" || !part.mediaType.toLowerCase().startsWith("audio/")) return part;
      const marked: LanguageModelV4FilePart = {
        ...part,
        mediaType: "audio/wav",
        providerOptions: { ...part.providerOptions, openaiCompatible: { ...part.providerOptions?.openaiCompatible, [MEDIA_TYPE_KEY]: part.mediaType } },
      };
      return marked;
    });
    return { ...message, content };
  });
}

/** One content part of a chat request, converted when it is a video or an audio part. */
function convertPart(part: unknown): unknown {
  if (!isRecord(part)) return part;
  if (part.type === "video_url") {
    const video = part.video_url;
    const url = isRecord(video) ? video.url : video;
    return typeof url === "string" ? { type: "file", file: { file_data: url } } : part;
  }
  if (part.type === "input_audio" && isRecord(part.input_audio) && typeof part.input_audio.data === "string") {
    const format = typeof part.input_audio.format === "string" ? part.input_audio.format : "wav";
    const marked = part[MEDIA_TYPE_KEY];
    const mediaType = typeof marked === "string" ? marked : format === "mp3" ? "audio/mpeg" : `audio/${format}`;
    return { type: "file", file: { file_data: `data:${mediaType};base64,${part.input_audio.data}` } };
  }
  return part;
}

/** Rewrites `video_url` and `input_audio` parts of every message in `body.messages` (in place) and returns `body`. */
export function geminiMediaBody<T extends Record<string, unknown>>(body: T): T {
  const messages = body.messages;
  if (!Array.isArray(messages)) return body;
  for (const message of messages) {
    if (isRecord(message) && Array.isArray(message.content)) message.content = message.content.map(convertPart);
  }
  return body;
}
