/**
 * `bub-ts/testing`: test doubles for plugin authors. A framework built here reads no
 * config file and discovers no plugins: it runs exactly the plugins a test gives it.
 *
 * ```ts
 * import { createTestBub, scriptedModel } from "bub-ts/testing";
 *
 * const model = scriptedModel(["Hello!"]);
 * const bub = await createTestBub({ plugins: [myPlugin, model] });
 * const result = await bub.processInbound({ channel: "test", chat_id: "1", content: "hi" });
 * result.modelOutput; // "Hello!"
 * model.prompts;      // what the model was asked
 * ```
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BubFramework } from "./kernel/framework.ts";
import { definePlugin, type BubPlugin } from "./kernel/hooks.ts";
import type { Prompt } from "./kernel/envelope.ts";
import type { PluginExport } from "./kernel/framework.ts";
import { Settings, emptyConfigFile } from "./config/settings.ts";
import { createBuiltinPlugin } from "./builtin/plugin.ts";

export { createMemoryTapeStore } from "./tape/memory-store.ts";

/** Options of {@link createTestBub}. */
export interface TestBubOptions {
  /** Plugins registered after the builtin one, in order (the last one wins). */
  plugins?: readonly PluginExport[];
  /** Settings as `BUB_*` variables; nothing is read from `process.env`. Default `{}`. */
  env?: NodeJS.ProcessEnv;
  /** Register the builtin plugin first (agent, tools, tape store, channels); default false. */
  builtin?: boolean;
  workspace?: string;
  /** Default: a folder name under the system's temporary directory (nothing is created there unless a plugin writes). */
  home?: string;
}

/** A framework for tests: settings from `env` only, the given plugins, no discovery. */
export async function createTestBub(options: TestBubOptions = {}): Promise<BubFramework> {
  const env = options.env ?? {};
  const home = options.home ?? join(tmpdir(), "bub-test-home");
  const framework = new BubFramework({
    workspace: options.workspace ?? process.cwd(),
    home,
    env,
    settings: new Settings(emptyConfigFile(join(home, "config.yml")), env),
  });
  if (options.builtin) await framework.registerPlugin(createBuiltinPlugin, "builtin", { origin: "builtin" });
  for (const plugin of options.plugins ?? []) await framework.registerPlugin(plugin);
  return framework;
}

/** A {@link scriptedModel} plugin, with what it was asked. */
export interface ScriptedModel extends BubPlugin {
  /** Every prompt the model received, in order. */
  readonly prompts: Prompt[];
}

/**
 * A model plugin (`runModel`) that answers from a script: the replies in order (the last
 * one repeats), or a function of the prompt.
 */
export function scriptedModel(script: readonly string[] | ((prompt: Prompt, call: number) => string)): ScriptedModel {
  const prompts: Prompt[] = [];
  const plugin = definePlugin({
    name: "scripted-model",
    runModel: ({ prompt }) => {
      prompts.push(prompt);
      if (typeof script === "function") return script(prompt, prompts.length - 1);
      return script[Math.min(prompts.length, script.length) - 1] ?? "";
    },
  });
  return Object.assign(plugin, { prompts });
}
