/**
 * The builtin plugin's CLI commands. Each command lives in its own module and loads its
 * heavy dependencies inside its action, so `bub --help` stays cheap.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import { registerRunCommand } from "./run.ts";
import { registerChatCommand } from "./chat.ts";
import { registerInstallCommand } from "./install.ts";
import { registerUpdateCommand } from "./update.ts";
import { registerUninstallCommand } from "./uninstall.ts";
import { registerPluginsCommand } from "./plugins.ts";
import { registerPluginCommand } from "./plugin-new.ts";
import { registerOnboardCommand } from "./onboard.ts";
import { registerGatewayCommand } from "./gateway.ts";
import { registerTrustCommand } from "./trust.ts";
import { registerModelsCommand } from "./models.ts";
import { registerTapeCommand } from "./tape.ts";
import { registerCostCommand } from "./cost.ts";
import { registerQueueCommand } from "./queue.ts";
import { registerDeliveryCommand } from "./delivery.ts";
import { registerLoginCommand, registerLogoutCommand } from "./login.ts";
import { registerUiCommand } from "./ui.ts";
import { registerMcpCommand } from "./mcp.ts";
import { registerAcpCommand } from "./acp.ts";
import { registerLinkCommand } from "./link.ts";
import { registerReplayCommand } from "./replay.ts";

const BUILTIN_COMMANDS: Record<string, (app: Command, framework: BubFramework) => void> = {
  run: registerRunCommand,
  chat: registerChatCommand,
  install: registerInstallCommand,
  update: registerUpdateCommand,
  uninstall: registerUninstallCommand,
  plugins: registerPluginsCommand,
  plugin: registerPluginCommand,
  onboard: registerOnboardCommand,
  gateway: registerGatewayCommand,
  hooks: registerHooksCommand,
  trust: registerTrustCommand,
  models: registerModelsCommand,
  tape: registerTapeCommand,
  cost: registerCostCommand,
  queue: registerQueueCommand,
  delivery: registerDeliveryCommand,
  login: registerLoginCommand,
  logout: registerLogoutCommand,
  ui: registerUiCommand,
  mcp: registerMcpCommand,
  acp: registerAcpCommand,
  link: registerLinkCommand,
  replay: registerReplayCommand,
};

/**
 * The builtin commands that run turns (or show the agent's hooks, `hooks`): `bub` creates
 * the builtin plugin with the agent only for these (see `createBub`'s `agent` option).
 */
const AGENT_COMMANDS: ReadonlySet<string> = new Set(["run", "chat", "gateway", "acp", "hooks", "models"]);

/**
 * Whether `bub <command>` needs the agent: the builtin commands that run turns, and any
 * command that is not builtin (a plugin's command may run turns through `processInbound`).
 */
export function commandNeedsAgent(command: string): boolean {
  return AGENT_COMMANDS.has(command) || !Object.hasOwn(BUILTIN_COMMANDS, command);
}

/**
 * Adds the builtin commands to `app`: only `command` when it names one of them (building
 * all of them costs ~2 ms of every start), else all of them, so help and "did you mean"
 * suggestions stay complete.
 */
export function registerBuiltinCommands(app: Command, framework: BubFramework, command?: string): void {
  const only = command !== undefined && Object.hasOwn(BUILTIN_COMMANDS, command) ? BUILTIN_COMMANDS[command] : null;
  if (only) return only(app, framework);
  for (const register of Object.values(BUILTIN_COMMANDS)) register(app, framework);
}

function registerHooksCommand(app: Command, framework: BubFramework): void {
  app
    .command("hooks")
    .description("show every hook with the plugins implementing it, and plugins that failed to load")
    .action(async () => {
      const { printHookReport } = await import("./hooks.ts");
      printHookReport(framework, process.stdout);
      // MCP servers connect on first use; here they are tried so that failures show.
      const { mcpOf } = await import("../../mcp/plugin.ts");
      const mcp = mcpOf(framework);
      if (mcp) await (await import("../../mcp/report.ts")).printMcpFailures(mcp, process.stdout);
    });
}
