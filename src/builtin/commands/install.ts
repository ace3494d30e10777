/** `bub install [SPECS...]`: adds plugins to the managed plugin project (or reinstalls it). */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { ProjectCommandOptions, ProjectContext } from "./plugin-project.ts";
import { pluginProjectDir } from "../../config/paths.ts";

/** Installs `specs` (none: everything the project lists) and returns the exit code. */
export async function installPlugins(context: ProjectContext, specs: readonly string[], options: ProjectCommandOptions = {}): Promise<number> {
  const { runInProject, toNpmSpec } = await import("./plugin-project.ts");
  const npmSpecs = specs.map((spec) => toNpmSpec(spec, context.cwd));
  return runInProject(context, options, npmSpecs.length === 0 ? ["install", "--no-audit", "--no-fund"] : ["install", "--save", "--no-audit", "--no-fund", ...npmSpecs]);
}

/** Adds `bub install` to the program. */
export function registerInstallCommand(app: Command, framework: BubFramework): void {
  app
    .command("install")
    .description("install plugins into the managed plugin project (no specs: install what it lists)")
    .argument("[specs...]", "npm names, name@version, local paths, git URLs or owner/repo[#ref]")
    .option("--project <dir>", "plugin project directory (env BUB_PROJECT, default <BUB_HOME>/bub-project)")
    .addHelpText(
      "after",
      `
Examples:
  $ bub install bub-plugin-greet                 # from the npm registry
  $ bub install bub-plugin-greet@1.2.0
  $ bub install ./my-plugin                      # a local package (linked)
  $ bub install someone/bub-weather#v1.0         # github:someone/bub-weather#v1.0
  $ bub install https://gitlab.com/me/plugin.git
  $ bub install                                  # reinstall everything the project lists
  $ bub install --project ./plugins ./my-plugin  # use another project directory`,
    )
    .action(async (specs: string[], options: ProjectCommandOptions) => {
      const { processContext } = await import("./plugin-project.ts");
      const code = await installPlugins(processContext(pluginProjectDir(framework.env, framework.home)), specs, options);
      if (code !== 0) process.exitCode = code;
    });
}
