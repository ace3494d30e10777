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
import { registerOnboardCommand } from "./onboard.ts";
import { registerGatewayCommand } from "./gateway.ts";

/** Adds every builtin command to `app`. */
export function registerBuiltinCommands(app: Command, framework: BubFramework): void {
  registerRunCommand(app, framework);
  registerChatCommand(app, framework);
  registerInstallCommand(app, framework);
  registerUpdateCommand(app, framework);
  registerUninstallCommand(app, framework);
  registerPluginsCommand(app, framework);
  registerOnboardCommand(app, framework);
  registerGatewayCommand(app, framework);
  app
    .command("hooks", { hidden: true })
    .description("show every hook with the plugins implementing it, and plugins that failed to load")
    .action(async () => {
      const { printHookReport } = await import("./hooks.ts");
      printHookReport(framework, process.stdout);
    });
}
