import type { PluginModule, PluginSource } from "../kernel/plugin-source.ts";
import { discoverPlugins, nameFromModule, parsePluginList } from "./discovery.ts";
import { importPluginModule } from "./load.ts";

/** What {@link pluginSource} looks through. */
export interface PluginSourceOptions {
  /** The managed plugin project (`BUB_PROJECT`, default `<BUB_HOME>/bub-project`). */
  readonly projectDir: string;
  /** The workspace, whose package.json and dependencies may declare plugins. */
  readonly workspace: string;
  /** Explicitly listed specifiers (`BUB_PLUGINS`, then `plugins:` of config.yml), in order. */
  readonly listed: readonly string[];
}

/** The plugins of the managed project, the workspace package and the listed specifiers. */
export function pluginSource(options: PluginSourceOptions): PluginSource {
  return {
    async discover() {
      const { candidates, problems } = await discoverPlugins(options);
      const modules = candidates.map(
        (candidate): PluginModule => ({
          name: candidate.name,
          fallbackName: candidate.name ?? nameFromModule(candidate.module),
          origin: candidate.source,
          load: () => importPluginModule(candidate.module),
        }),
      );
      return { modules, problems };
    },
  };
}

/** The listed plugin specifiers: `BUB_PLUGINS` (comma separated), then config.yml's `plugins:`. */
export function listedPlugins(env: NodeJS.ProcessEnv, configured: unknown): string[] {
  const fromConfig = Array.isArray(configured) ? configured.map(String) : typeof configured === "string" ? parsePluginList(configured) : [];
  return [...parsePluginList(env.BUB_PLUGINS), ...fromConfig];
}
