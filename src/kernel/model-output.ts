import { BubError, toErrorKind } from "./errors.ts";
import type { HookRuntime } from "./runtime.ts";
import type { HookArgs } from "./hooks.ts";
import type { Envelope } from "./envelope.ts";

/**
 * A turn's model output: the model hook's stream (a `runModel` plugin's text is one event;
 * a channel that shows the stream wraps it in its own `runModelStream`); text deltas joined,
 * error events told to `onError`. The prompt echoed (and `onError` told) when no model answers.
 */
export async function turnModelOutput(runtime: HookRuntime, inbound: Envelope, args: HookArgs<"runModelStream">): Promise<string> {
  const stream = await runtime.call("runModelStream", args);
  if (!stream) {
    await runtime.call("onError", { stage: "run_model", error: new Error("no model skill returned output"), message: inbound });
    return typeof args.prompt === "string" ? args.prompt : inbound.content;
  }
  let output = "";
  for await (const event of stream) {
    if (event.kind === "text") output += String(event.data.delta);
    else if (event.kind === "error") {
      const error = new BubError(toErrorKind(event.data.kind), String(event.data.message ?? ""), { details: event.data.details });
      await runtime.call("onError", { stage: "run_model", error, message: inbound });
    }
  }
  return output;
}
