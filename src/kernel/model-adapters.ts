import { AsyncStreamEvents, collectText } from "./stream.ts";
import type { HookRuntime } from "./runtime.ts";
import type { HookArgs } from "./hooks.ts";

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
