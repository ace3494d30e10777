import { join, resolve } from "node:path";
import { BubFramework } from "../kernel/framework.ts";
import { readConfigFile } from "../config/config-file.ts";
import { bubHome, expandHome, pluginProjectDir } from "../config/paths.ts";
import { Settings } from "../config/settings.ts";
import { listedPlugins, registerDiscoveredPlugins } from "../plugins/register.ts";
import type { PluginExport } from "../kernel/framework.ts";
import { createBuiltinPlugin } from "./plugin.ts";

/** Options of {@link createBub}; every one has a default. */
export interface CreateBubOptions {
  /** Directory the agent works in; default the current directory. */
  workspace?: string;
  /** Bub's home; default `BUB_HOME`, else `~/.bub`. */
  home?: string;
  /** The YAML config file; default `<home>/config.yml`. */
  configFile?: string;
  /** Environment the settings are read from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The plugin registered first; default the builtin plugin (agent, tools, tapes, channels). */
  builtin?: PluginExport;
}

/**
 * A framework as `bub` itself runs it: settings from the environment and `config.yml`, the
 * builtin plugin registered first, then the plugins of the managed project, the workspace
 * package and `BUB_PLUGINS` / `plugins:`.
 *
 * ```ts
 * const bub = await createBub({ workspace: process.cwd() });
 * const result = await bub.processInbound({ channel: "cli", chat_id: "local", content: "hello" });
 * ```
 */
export async function createBub(options: CreateBubOptions = {}): Promise<BubFramework> {
  const env = options.env ?? process.env;
  const workspace = resolve(expandHome(options.workspace ?? process.cwd()));
  const home = options.home === undefined ? bubHome(env) : resolve(expandHome(options.home));
  const configFile = resolve(options.configFile ?? join(home, "config.yml"));
  const file = await readConfigFile(configFile);
  const settings = new Settings(file, env);
  const framework = new BubFramework({ workspace, home, env, settings });
  try {
    await framework.registerPlugin(options.builtin ?? createBuiltinPlugin, "builtin", { origin: "builtin" });
  } catch (error) {
    framework.pluginFailed("builtin", "builtin", error, "initialize");
  }
  await registerDiscoveredPlugins(framework, { projectDir: pluginProjectDir(env, home), workspace, listed: listedPlugins(env, file.data.plugins) });
  return framework;
}
