import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { BubFramework } from "../kernel/framework.ts";
import { readConfigFile } from "../config/config-file.ts";
import { bubHome, expandHome, pluginProjectDir } from "../config/paths.ts";
import { Settings } from "../config/settings.ts";
import { listedPlugins, registerDiscoveredPlugins } from "../plugins/register.ts";
import type { PluginExport } from "../kernel/framework.ts";
import { createBuiltinPlugin } from "./plugin.ts";
import { approvalIsSet, approvalSettings } from "../approval/settings.ts";

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
  /**
   * Whether the default builtin plugin answers the agent's hooks (the model loop, tools,
   * model options); default true. Without it a turn only echoes its prompt: `bub` leaves
   * the agent out of the commands that run no turn, so they never load the model layer.
   */
  agent?: boolean;
  /**
   * Whether the workspace's own code loads: the plugins its package.json (and its
   * dependencies') declare, and `BUB_PLUGINS` / `plugins:` paths inside it. `true` trusts it
   * (an embedder that chose the folder, a test), `false` never does; by default it is trusted
   * only when `bub trust` recorded it in `<home>/trust.json` and its package.json and .env
   * are unchanged since (docs/security.md, "Workspace trust").
   */
  trustWorkspace?: boolean;
  /** Called once when the workspace is not trusted and some of its plugins were not loaded. */
  onUntrustedWorkspace?: (skipped: UntrustedWorkspace) => void;
}

/** What an untrusted workspace had that was not loaded. */
export interface UntrustedWorkspace {
  readonly workspace: string;
  /** Plugins its package.json or its dependencies declare. */
  readonly packagePlugins: readonly string[];
  /** `BUB_PLUGINS` / `plugins:` entries that point inside it. */
  readonly listedPlugins: readonly string[];
}

/**
 * A framework as `bub` itself runs it: settings from the environment and `config.yml`, the
 * builtin plugin registered first, then the plugins of the managed project, the workspace
 * package (when trusted, see {@link CreateBubOptions.trustWorkspace}) and `BUB_PLUGINS` /
 * `plugins:`.
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
    await framework.registerPlugin(options.builtin ?? ((made: BubFramework) => createBuiltinPlugin(made, { agent: options.agent !== false })), "builtin", { origin: "builtin" });
  } catch (error) {
    framework.pluginFailed("builtin", "builtin", error, "initialize");
  }
  await registerApproval(framework, env, file.data);
  let trustWorkspace = options.trustWorkspace;
  if (trustWorkspace === undefined) {
    const { isTrusted } = await import("../config/trust.ts");
    trustWorkspace = await isTrusted(home, workspace);
  }
  await registerMcp(framework, trustWorkspace);
  const skipped = await registerDiscoveredPlugins(framework, {
    projectDir: pluginProjectDir(env, home),
    workspace,
    listed: listedPlugins(env, file.data.plugins),
    trustWorkspace,
    trustedFolders: [home],
    checkpoint: () => toolCheckpoint(framework),
  });
  if (skipped.length > 0) {
    const names = (source: string) => skipped.filter((candidate) => candidate.source === source).map((candidate) => candidate.name ?? candidate.module);
    options.onUntrustedWorkspace?.({ workspace, packagePlugins: names("workspace"), listedPlugins: names("config") });
  }
  await registerTracing(framework, env);
  return framework;
}

/**
 * OpenTelemetry tracing (docs/observability.md), registered last so it sees every model and
 * tool call before any other plugin does; only when an OTLP endpoint variable is set (and
 * tracing is not disabled), so that without it nothing of it is even imported.
 */
async function registerTracing(framework: BubFramework, env: NodeJS.ProcessEnv): Promise<void> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) return;
  const { tracingSettings } = await import("../telemetry/settings.ts");
  const settings = tracingSettings(env);
  if (!settings) return;
  const { createTracingPlugin } = await import("../telemetry/plugin.ts");
  await framework.registerPlugin(createTracingPlugin(settings), "tracing", { origin: "builtin" });
}

/**
 * The approval policy (docs/security.md, "Approval for dangerous tools"), right after the
 * builtin: only with `approval: ask`, so the default costs nothing and plugins registered
 * later decide before it. An invalid value fails here, before any tool can run.
 */
async function registerApproval(framework: BubFramework, env: NodeJS.ProcessEnv, fileData: Record<string, unknown>): Promise<void> {
  framework.settings.register(approvalSettings);
  if (!approvalIsSet(env, fileData)) return;
  if ((await framework.settings.load(approvalSettings)).approval !== "ask") return;
  const { createApprovalPlugin } = await import("../approval/plugin.ts");
  await framework.registerPlugin(createApprovalPlugin, "approval", { origin: "builtin" });
}

/**
 * The MCP servers (docs/mcp.md), right after the approval policy: only when
 * `<home>/mcp.json` or the workspace's `.mcp.json` exists (the plugin says why an untrusted
 * workspace's file is not used). Nothing connects here: the first turn does.
 */
async function registerMcp(framework: BubFramework, trusted: boolean): Promise<void> {
  if (!existsSync(join(framework.home, "mcp.json")) && !existsSync(join(framework.workspace, ".mcp.json"))) return;
  const { createMcpPlugin } = await import("../mcp/plugin.ts");
  await framework.registerPlugin(createMcpPlugin({ trusted }), "mcp", { origin: "builtin" });
}

/**
 * Remembers the framework's tools; the function returned puts them back as they were (a
 * rejected plugin's factory may have registered or replaced some). Loads the tool registry,
 * so it is only asked for when a plugin factory runs.
 */
async function toolCheckpoint(framework: BubFramework): Promise<() => void> {
  const { toolsOf } = await import("../tools/global.ts");
  const registry = toolsOf(framework);
  const before = new Map(registry.list().map((tool) => [tool.name, tool]));
  return () => {
    for (const tool of registry.list()) {
      const kept = before.get(tool.name);
      if (kept === tool) continue;
      if (kept) registry.register(kept);
      else registry.register(tool)();
    }
  };
}
