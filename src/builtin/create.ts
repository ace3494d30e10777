import { join, resolve } from "node:path";
import { BubFramework } from "../kernel/framework.ts";
import { readConfigFile } from "../config/config-file.ts";
import { bubHome, expandHome, pluginProjectDir } from "../config/paths.ts";
import { Settings } from "../config/settings.ts";
import { listedPlugins, pluginSource } from "../plugins/source.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
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
  builtin?: BubPlugin | ((framework: BubFramework) => BubPlugin | Promise<BubPlugin>);
  /** Register the builtin and discovered plugins before returning; default true. */
  loadPlugins?: boolean;
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
  const plugins = pluginSource({ projectDir: pluginProjectDir(env, home), workspace, listed: listedPlugins(env, file.data.plugins) });
  const framework = new BubFramework({ workspace, home, env, settings, plugins, builtin: options.builtin ?? createBuiltinPlugin });
  if (options.loadPlugins !== false) await framework.loadPlugins();
  return framework;
}
