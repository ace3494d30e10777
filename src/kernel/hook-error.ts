/**
 * A plugin's hook failed: the error names the plugin and the hook, keeps the original as its
 * cause, and says what to do, so `bub` prints `bub: plugin 'x' failed in buildPrompt: boom —
 * fix the plugin or take it out (`bub hooks` shows where each plugin comes from)`.
 */
import { BubError } from "./errors.ts";

const MARKER = Symbol.for("bub.error.PluginHookError");

/** What to do when a plugin's hook fails and its own message does not say. */
export const PLUGIN_HOOK_ADVICE = "fix the plugin or take it out (`bub hooks` shows where each plugin comes from)";

function firstLine(error: unknown): string {
  const text = BubError.isInstance(error) || error instanceof Error ? error.message || error.name : String(error);
  return text.trim().split("\n")[0].trim();
}

/**
 * The error a hook call rethrows when a plugin's implementation throws. Its kind is the
 * cause's kind for a {@link BubError} cause, else `unknown`; `plugin`, `hook` and `cause`
 * say where and what.
 */
export class PluginHookError extends BubError {
  readonly plugin: string;
  readonly hook: string;
  readonly [MARKER] = true;

  constructor(plugin: string, hook: string, cause: unknown) {
    const line = firstLine(cause);
    const cut = line.indexOf(" — ");
    const what = cut >= 0 ? line.slice(0, cut) : line.replace(/\.$/, "");
    const todo = cut >= 0 ? line.slice(cut + 3) : PLUGIN_HOOK_ADVICE;
    super(BubError.isInstance(cause) ? cause.kind : "unknown", `plugin '${plugin}' failed in ${hook}: ${what} — ${todo}`, {
      cause,
      details: BubError.isInstance(cause) ? cause.details : undefined,
    });
    this.name = "PluginHookError";
    this.plugin = plugin;
    this.hook = hook;
  }

  /** True for a PluginHookError, even one made by another copy of this package. */
  static override isInstance(value: unknown): value is PluginHookError {
    return typeof value === "object" && value !== null && MARKER in value && value[MARKER] === true;
  }
}

/**
 * Whether an error thrown by `plugin`'s implementation should be wrapped in a
 * {@link PluginHookError}: not for the builtin plugin (its errors are worded already), a
 * cancellation (`AbortError`), or an error that is already one.
 */
export function blamesPlugin(plugin: string, error: unknown): boolean {
  if (plugin === "builtin") return false;
  if (error instanceof Error && error.name === "AbortError") return false;
  return !PluginHookError.isInstance(error);
}
