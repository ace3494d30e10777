/** `bub uninstall NAMES...`: removes plugins from the managed plugin project. */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { ProjectCommandOptions, ProjectContext } from "./plugin-project.ts";
import { pluginProjectDir } from "../../config/paths.ts";

/**
 * The npm packages to remove for `names`: a name the project lists as a dependency is that
 * package; otherwise it must be a plugin an installed package declares (the name `bub
 * plugins` and `bub hooks` show), which stands for that package. Throws for anything else.
 */
export async function packagesToRemove(dir: string, names: readonly string[]): Promise<{ packages: string[]; notes: string[] }> {
  const { declaredPlugins, projectDependencies } = await import("./plugin-project.ts");
  const dependencies = await projectDependencies(dir);
  const plugins = await declaredPlugins(dir);
  const packages: string[] = [];
  const notes: string[] = [];
  for (const name of names) {
    let dependency: string | undefined = dependencies.includes(name) ? name : undefined;
    if (dependency === undefined) {
      dependency = plugins.find((entry) => entry.plugin === name)?.dependency;
      if (dependency === undefined) {
        const installed = dependencies.filter((item) => item !== "bub-ts");
        const known = installed.length === 0 ? "nothing is installed" : `packages: ${installed.join(", ")}; plugins: ${plugins.map((entry) => entry.plugin).join(", ") || "none"}`;
        throw new Error(`Nothing named '${name}' is installed in ${dir} (${known}). Give a package or plugin name as \`bub plugins\` shows it.`);
      }
      const siblings = plugins.filter((entry) => entry.dependency === dependency).map((entry) => entry.plugin);
      notes.push(`Plugin '${name}' comes from package ${dependency}${siblings.length > 1 ? `, which also provides ${siblings.filter((item) => item !== name).join(", ")}` : ""}; removing the package.`);
    }
    if (!packages.includes(dependency)) packages.push(dependency);
  }
  return { packages, notes };
}

/** Removes the packages or plugins `names` and returns the exit code. */
export async function uninstallPlugins(context: ProjectContext, names: readonly string[], options: ProjectCommandOptions = {}): Promise<number> {
  const { projectDirOf, runInProject } = await import("./plugin-project.ts");
  let packages: string[];
  try {
    const found = await packagesToRemove(projectDirOf(context, options), names);
    for (const note of found.notes) context.io.stdout.write(`${note}\n`);
    packages = found.packages;
  } catch (error) {
    context.io.stderr.write(`bub: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  return runInProject(context, options, ["uninstall", "--save", "--no-audit", "--no-fund", ...packages]);
}

/** Adds `bub uninstall` to the program. */
export function registerUninstallCommand(app: Command, framework: BubFramework): void {
  app
    .command("uninstall")
    .description("remove plugins from the managed plugin project")
    .argument("<names...>", "package names as npm knows them, or plugin names as `bub plugins` shows them")
    .option("--project <dir>", "plugin project directory (env BUB_PROJECT, default <BUB_HOME>/bub-project)")
    .addHelpText(
      "after",
      `
A plugin name removes the package that provides it, with every other plugin of that package.

Examples:
  $ bub uninstall bub-plugin-greet
  $ bub uninstall greet                          # the plugin's name: removes bub-plugin-greet
  $ bub uninstall bub-plugin-greet bub-plugin-weather
  $ bub uninstall --project ./plugins bub-plugin-greet`,
    )
    .action(async (names: string[], options: ProjectCommandOptions) => {
      const { processContext } = await import("./plugin-project.ts");
      const code = await uninstallPlugins(processContext(pluginProjectDir(framework.env, framework.home)), names, options);
      if (code !== 0) process.exitCode = code;
    });
}
