import { join } from "node:path";
import { BubFramework } from "../../src/kernel/framework.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import type { TurnContext } from "../../src/kernel/turn-context.ts";
import { createDefaultTapeContext } from "../../src/tape/context.ts";
import { Settings, emptyConfigFile } from "../../src/config/settings.ts";

/** A kernel framework (no builtin plugin, no discovery) whose settings come from `env` only. */
export function kernelFramework(options: { env?: NodeJS.ProcessEnv; home?: string; workspace?: string } = {}): BubFramework {
  const env = options.env ?? {};
  const home = options.home ?? "/nonexistent-bub-home";
  return new BubFramework({ workspace: options.workspace ?? "/tmp", home, env, settings: new Settings(emptyConfigFile(join(home, "config.yml")), env) });
}

/**
 * A turn context over a {@link kernelFramework} (settings from `env`), for tests that call
 * hooks, interceptors or tools directly. `signal` defaults to one nobody aborts.
 */
export function testTurnContext(options: { env?: NodeJS.ProcessEnv; workspace?: string; sessionId?: string; signal?: AbortSignal } = {}): TurnContext {
  const framework = kernelFramework(options);
  return framework.turnContext({ turnId: "turn-test", sessionId: options.sessionId ?? "test:1", signal: options.signal ?? new AbortController().signal });
}

/**
 * The `base` plugin of the agent tests: `store` as the tape store, the default tape context,
 * "continue" as the continue prompt and a one-line system prompt; `hooks` on top.
 */
export function basePlugin(store: TapeStore, hooks: BubPlugin = {}): BubPlugin {
  return {
    name: "base",
    provideTapeStore: () => store,
    buildTapeContext: () => createDefaultTapeContext(),
    continuePrompt: () => "continue",
    systemPrompt: () => "You are a test agent.",
    ...hooks,
  };
}
