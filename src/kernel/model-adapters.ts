import { AsyncStreamEvents, collectText } from "./stream.ts";
import type { HookRuntime } from "./runtime.ts";
import type { HookArgs } from "./hooks.ts";
import type { Envelope } from "./envelope.ts";
import { BubError, toErrorKind } from "./errors.ts";
import type { ChannelRouter } from "./types.ts";

/** The model hooks' arguments (the same for both paths). */
type ModelArgs = HookArgs<"runModel">;

function checkModelText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") throw new TypeError("hook.runModel must return string or null");
  return value;
}

function checkStream(value: unknown): AsyncStreamEvents | null {
  if (value === null || value === undefined) return null;
  if (!AsyncStreamEvents.isInstance(value)) throw new TypeError("hook.runModelStream must return AsyncStreamEvents or null");
  return value;
}

/**
 * Runs the model without streaming. A stream-only plugin is adapted by joining the text of
 * its stream. Returns null when no plugin answers (the caller falls back to echo).
 */
export async function runModel(runtime: HookRuntime, args: ModelArgs): Promise<string | null> {
  const path = runtime.modelPath();
  if (path === null) return null;
  if (path === "runModel") return checkModelText(await runtime.callFirst("runModel", args));
  const stream = checkStream(await runtime.callFirst("runModelStream", args));
  return stream ? collectText(stream) : null;
}

/**
 * Runs the model as a stream. A text-only plugin is adapted into one `text` event.
 * Returns null when no plugin answers.
 */
export async function runModelStream(runtime: HookRuntime, args: ModelArgs): Promise<AsyncStreamEvents | null> {
  const path = runtime.modelPath();
  if (path === null) return null;
  if (path === "runModelStream") return checkStream(await runtime.callFirst("runModelStream", args));
  const text = checkModelText(await runtime.callFirst("runModel", args));
  return text === null ? null : AsyncStreamEvents.of([{ kind: "text", data: { delta: text } }]);
}

/** How a turn wants its model output: streamed (`streamOutput`), through the bound router's `wrapStream` when `wrap` is given. */
export interface TurnModelOptions {
  readonly streamOutput: boolean;
  readonly wrap: Pick<ChannelRouter, "wrapStream"> | null;
}

/**
 * A turn's model output: through the stream path when the caller streams or the deciding
 * plugin is a streaming one (so its error events reach `onError`), else the text path; the
 * prompt echoed (and `onError` told) when no model answers.
 */
export async function turnModelOutput(runtime: HookRuntime, inbound: Envelope, args: ModelArgs, options: TurnModelOptions): Promise<string> {
  const streamed = options.streamOutput || runtime.modelPath() === "runModelStream";
  const output = streamed ? await streamedText(runtime, inbound, args, options.wrap) : await runModel(runtime, args);
  if (output !== null) return output;
  await runtime.notifyError("run_model", new Error("no model skill returned output"), inbound);
  return typeof args.prompt === "string" ? args.prompt : inbound.content;
}

/** The streaming model path: text deltas joined, error events reported; null when no model answered. */
async function streamedText(runtime: HookRuntime, inbound: Envelope, args: ModelArgs, wrap: TurnModelOptions["wrap"]): Promise<string | null> {
  let stream = await runModelStream(runtime, args);
  if (!stream) return null;
  if (wrap) stream = wrap.wrapStream(inbound, stream);
  let output = "";
  for await (const event of stream) {
    if (event.kind === "text") output += String(event.data.delta);
    else if (event.kind === "error") {
      const error = new BubError(toErrorKind(event.data.kind), String(event.data.message ?? ""), { details: event.data.details });
      await runtime.notifyError("run_model", error, inbound);
    }
  }
  return output;
}
