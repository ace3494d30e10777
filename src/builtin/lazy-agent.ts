/**
 * The builtin plugin's agent hooks, loaded on first use: the agent pulls in the model
 * layer, tools and tape stores, which `bub --help` and plugin-only commands never need.
 * Async hooks import the agent part when called; the sync sidecar hook answers once a turn
 * (whose `loadState` loads the part) has started.
 */
import type { BubFramework } from "../kernel/framework.ts";
import type { BubHooks, BubPlugin } from "../kernel/hooks.ts";
import { createDefaultTapeContext } from "../tape/context.ts";
import type { createAgentHooks } from "./agent-plugin.ts";

type AgentPart = ReturnType<typeof createAgentHooks>;

/** The builtin hooks the agent part answers, always present. */
export type LazyAgentHooks = Pick<Required<BubHooks>, "loadState" | "saveState" | "buildPrompt" | "runModelStream" | "continuePrompt" | "provideModelOptions" | "beforeToolCall" | "afterToolCall"> &
  Pick<BubPlugin, "provideTapeStore" | "provideTapeSidecar" | "buildTapeContext">;

/** Hooks that forward to the agent part, importing it on first call. */
export function createLazyAgentHooks(framework: BubFramework): LazyAgentHooks {
  let loaded: AgentPart | null = null;
  let loading: Promise<AgentPart> | null = null;
  const part = (): Promise<AgentPart> =>
    (loading ??= (async () => {
      const [{ createAgentHooks }, { toolsOf }, { registerScheduleTools }] = await Promise.all([
        import("./agent-plugin.ts"),
        import("../tools/global.ts"),
        import("../schedule/tools.ts"),
      ]);
      registerScheduleTools(framework);
      const config = (path: string) => framework.settings.getValue(path, undefined);
      const maxBytes = () => {
        const value = config("skill_max_bytes");
        return typeof value === "number" ? value : undefined;
      };
      loaded = createAgentHooks(framework, {
        tools: toolsOf(framework),
        // Comma commands load their parser with the first command; skill discovery (and the
        // YAML parser for SKILL.md) with the first model call.
        runCommand: async (line, options) => (await import("../tools/commands.ts")).runCommaCommand(line, options),
        skillsPrompt: async ({ promptText, workspace, allowedSkills }) =>
          await (await import("../skills/prompt.ts")).buildSkillsPrompt(promptText, { workspace, allowedSkills, config, maxBytes: maxBytes() }),
      });
      return loaded;
    })());

  return {
    loadState: async (args) => (await part()).hooks.loadState(args),
    saveState: async (args) => (await part()).hooks.saveState(args),
    buildPrompt: async (args) => (await part()).hooks.buildPrompt(args),
    runModelStream: async (args) => (await part()).hooks.runModelStream(args),
    continuePrompt: async (args) => (await part()).hooks.continuePrompt(args),
    provideModelOptions: async (args) => (await part()).hooks.provideModelOptions(args),
    beforeToolCall: async (args) => (await part()).hooks.beforeToolCall(args),
    afterToolCall: async (args) => (await part()).hooks.afterToolCall(args),
    provideTapeStore() {
      return (async function* () {
        const [{ channelSettings }, { createTapeStoreFromSettings }] = await Promise.all([import("./settings.ts"), import("../tape/store-from-settings.ts")]);
        const settings = await framework.settings.load(channelSettings);
        const store = createTapeStoreFromSettings({ kind: settings.tape_store, home: framework.home, dsn: settings.tape_dsn, databaseUrl: settings.database_url });
        try {
          yield store;
        } finally {
          await store.close?.();
        }
      })();
    },
    provideTapeSidecar() {
      return loaded ? loaded.hooks.provideTapeSidecar({}) : undefined;
    },
    buildTapeContext() {
      return createDefaultTapeContext();
    },
  };
}
