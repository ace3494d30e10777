import type { BubFramework } from "../kernel/framework.ts";
import { discoverPlugins, nameFromModule, parsePluginList, type PluginCandidate } from "./discovery.ts";
import { importPluginModule } from "./load.ts";

/** Where {@link registerDiscoveredPlugins} looks. */
export interface DiscoveryOptions {
  /** The managed plugin project (`BUB_PROJECT`, default `<BUB_HOME>/bub-project`). */
  readonly projectDir: string;
  /** The workspace, whose package.json and dependencies may declare plugins. */
  readonly workspace: string;
  /** Explicitly listed specifiers (`BUB_PLUGINS`, then `plugins:` of config.yml), in order. */
  readonly listed: readonly string[];
  /** Whether the workspace's own plugins may load (see docs/security.md); default true. */
  readonly trustWorkspace?: boolean;
  /** Folders always trusted even when inside the workspace (Bub's home). */
  readonly trustedFolders?: readonly string[];
}

/**
 * Registers the plugins of the managed project, the workspace package and the listed
 * specifiers, in that order. A plugin that fails to import or initialise is recorded on the
 * framework (`bub hooks` lists it) and skipped. Returns the plugins of an untrusted workspace
 * that were found and not loaded.
 */
export async function registerDiscoveredPlugins(framework: BubFramework, options: DiscoveryOptions): Promise<PluginCandidate[]> {
  const { candidates, problems, skipped } = await discoverPlugins(options);
  for (const problem of problems) framework.pluginFailed(problem.name, "config", problem.error);
  for (const candidate of candidates) {
    const fallbackName = candidate.name ?? nameFromModule(candidate.module);
    let exported: unknown;
    try {
      exported = await importPluginModule(candidate.module);
    } catch (error) {
      framework.pluginFailed(fallbackName, candidate.source, error, "load");
      continue;
    }
    try {
      if (typeof exported !== "function" && (typeof exported !== "object" || exported === null)) throw new TypeError(`module exports ${typeof exported}, expected a plugin object or factory`);
      await framework.registerPlugin(exported as Parameters<BubFramework["registerPlugin"]>[0], candidate.name, { origin: candidate.source, fallbackName });
    } catch (error) {
      framework.pluginFailed(fallbackName, candidate.source, error, "initialize");
    }
  }
  return skipped;
}

/** The listed plugin specifiers: `BUB_PLUGINS` (comma separated), then config.yml's `plugins:`. */
export function listedPlugins(env: NodeJS.ProcessEnv, configured: unknown): string[] {
  const fromConfig = Array.isArray(configured) ? configured.map(String) : typeof configured === "string" ? parsePluginList(configured) : [];
  return [...parsePluginList(env.BUB_PLUGINS), ...fromConfig];
}
