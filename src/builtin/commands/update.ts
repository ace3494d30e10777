/** `bub update [PACKAGES...]`: updates plugins of the managed plugin project. */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { ProjectCommandOptions, ProjectContext } from "./plugin-project.ts";
import { pluginProjectDir } from "../../config/paths.ts";

/** Updates `packages` (none: every package) within their version ranges; returns the exit code. */
export async function updatePlugins(context: ProjectContext, packages: readonly string[], options: ProjectCommandOptions = {}): Promise<number> {
  const { runInProject } = await import("./plugin-project.ts");
  return runInProject(context, options, ["update", "--save", "--no-audit", "--no-fund", ...packages]);
}

/** Adds `bub update` to the program. */
export function registerUpdateCommand(app: Command, framework: BubFramework): void {
  app
    .command("update")
    .description("update plugins in the managed plugin project (no names: all of them)")
    .argument("[packages...]", "package names as npm knows them")
    .option("--project <dir>", "plugin project directory (env BUB_PROJECT, default <BUB_HOME>/bub-project)")
    .addHelpText(
      "after",
      `
Examples:
  $ bub update                      # every installed plugin
  $ bub update bub-plugin-greet     # just this one
  $ BUB_PROJECT=~/work/bub-plugins bub update`,
    )
    .action(async (packages: string[], options: ProjectCommandOptions) => {
      const { processContext } = await import("./plugin-project.ts");
      const code = await updatePlugins(processContext(pluginProjectDir(framework.env, framework.home)), packages, options);
      if (code !== 0) process.exitCode = code;
    });
}
