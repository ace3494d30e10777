import type { BubFramework } from "../kernel/framework.ts";
import type { PluginExport } from "../kernel/plugin-export.ts";
import { discoverPlugins, nameFromModule, parsePluginList, type PluginCandidate } from "./discovery.ts";
import { importPluginModule } from "./load.ts";
import { checkPluginRequirement, type RunningVersions } from "./api-check.ts";

/** Where {@link registerDiscoveredPlugins} looks. */
/** True for what a plugin module may export: an object, or a function the framework calls (or constructs) for one. */
function isPluginExport(value: unknown): value is PluginExport {
  return typeof value === "function" || (typeof value === "object" && value !== null);
}

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
  /**
   * Called before a plugin's factory runs; returns a function that undoes what the factory
   * did outside the hook runtime (tools it registered), called when the plugin is rejected.
   */
  readonly checkpoint?: () => Promise<() => void>;
  /** What plugins' declared ranges are checked against (default: the running plugin API and bub-ts). */
  readonly running?: RunningVersions;
}

const ORIGIN_WORDS: Record<string, string> = {
  builtin: "built in",
  project: "the plugin project (bub install)",
  workspace: "the workspace's package.json",
  config: "BUB_PLUGINS or config.yml",
  manual: "registered by code",
};

/** Where a plugin came from, in words: `BUB_PLUGINS or config.yml (./hello.ts)`. */
function originWords(source: string, from: string | undefined): string {
  return `${ORIGIN_WORDS[source] ?? source}${from ? ` (${from})` : ""}`;
}

/** The error for a plugin whose name is taken: both sources, and what to do. */
function clashError(name: string, framework: BubFramework, source: string, from: string | undefined): Error {
  const holder = framework.pluginStatus.find((status) => status.ok && status.name === name);
  const first = holder ? originWords(holder.source, holder.from) : "another plugin";
  return new Error(`plugin name '${name}' from ${originWords(source, from)} is already taken by '${name}' from ${first}; nothing of the second one was loaded — rename one of them or remove one`);
}

/**
 * Registers the plugins of the managed project, the workspace package and the listed
 * specifiers, in that order. A plugin that fails to import or initialise is recorded on the
 * framework (`bub hooks` lists it) and skipped. A plugin whose name is taken by one
 * registered before it is rejected with both sources named: when its name is known from
 * package.json or the list it is not imported at all, else what its factory registered
 * outside the hook runtime is undone (`checkpoint`). A plugin whose package.json declares a
 * range that leaves out the running plugin API (or bub-ts) is not imported and is recorded
 * with an `IncompatiblePluginError`. Returns the plugins of an untrusted workspace that were
 * found and not loaded.
 */
export async function registerDiscoveredPlugins(framework: BubFramework, options: DiscoveryOptions): Promise<PluginCandidate[]> {
  const { candidates, problems, skipped } = await discoverPlugins(options);
  for (const problem of problems) framework.pluginFailed(problem.name, problem.source, problem.error);
  const taken = (name: string) => framework.runtime.plugins.some((entry) => entry.name === name);
  for (const candidate of candidates) {
    const fallbackName = candidate.name ?? nameFromModule(candidate.module);
    const from = candidate.packageName ?? candidate.module;
    const mismatch = await checkPluginRequirement(fallbackName, candidate.requires, options.running);
    if (mismatch) {
      framework.pluginFailed(fallbackName, candidate.source, mismatch, "load", from);
      continue;
    }
    // A name known before import that is taken: the module is not even imported.
    if (candidate.name !== null && taken(candidate.name)) {
      framework.pluginFailed(candidate.name, candidate.source, clashError(candidate.name, framework, candidate.source, from), "load", from);
      continue;
    }
    let exported: unknown;
    try {
      exported = await importPluginModule(candidate.module);
    } catch (error) {
      framework.pluginFailed(fallbackName, candidate.source, error, "load", from);
      continue;
    }
    // Only a factory of a plugin named by itself can clash after it ran.
    const undo = candidate.name === null && typeof exported === "function" && options.checkpoint ? await options.checkpoint() : () => {};
    let clashName: string | null = null;
    try {
      if (!isPluginExport(exported)) throw new TypeError(`module exports ${typeof exported}, expected a plugin object or factory`);
      await framework.registerPlugin(exported, candidate.name, { origin: candidate.source, fallbackName, from, beforeRegister: (name) => {
        if (!taken(name)) return;
        clashName = name;
        throw clashError(name, framework, candidate.source, from);
      } });
    } catch (error) {
      undo();
      framework.pluginFailed(clashName ?? fallbackName, candidate.source, error, clashName === null ? "initialize" : "load", from);
    }
  }
  return skipped;
}

/** The listed plugin specifiers: `BUB_PLUGINS` (comma separated), then config.yml's `plugins:`. */
export function listedPlugins(env: NodeJS.ProcessEnv, configured: unknown): string[] {
  const fromConfig = Array.isArray(configured) ? configured.map(String) : typeof configured === "string" ? parsePluginList(configured) : [];
  return [...parsePluginList(env.BUB_PLUGINS), ...fromConfig];
}
