/** `bub uninstall PACKAGES...`: removes plugins from the managed plugin project. */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { ProjectCommandOptions, ProjectContext } from "./plugin-project.ts";

/** Removes `packages` and returns the exit code. */
export async function uninstallPlugins(context: ProjectContext, packages: readonly string[], options: ProjectCommandOptions = {}): Promise<number> {
  const { runInProject } = await import("./plugin-project.ts");
  return runInProject(context, options, ["uninstall", "--save", "--no-audit", "--no-fund", ...packages]);
}

/** Adds `bub uninstall` to the program. */
export function registerUninstallCommand(app: Command, framework: BubFramework): void {
  app
    .command("uninstall")
    .description("remove plugins from the managed plugin project")
    .argument("<packages...>", "package names as npm knows them (see `bub plugins`)")
    .option("--project <dir>", "plugin project directory (env BUB_PROJECT, default <BUB_HOME>/bub-project)")
    .addHelpText(
      "after",
      `
Examples:
  $ bub uninstall bub-plugin-greet
  $ bub uninstall bub-plugin-greet bub-plugin-weather
  $ bub uninstall --project ./plugins bub-plugin-greet`,
    )
    .action(async (packages: string[], options: ProjectCommandOptions) => {
      const { processContext } = await import("./plugin-project.ts");
      const code = await uninstallPlugins(processContext(framework.projectDir), packages, options);
      if (code !== 0) process.exitCode = code;
    });
}
