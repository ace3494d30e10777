/** `bub plugins`: which plugins loaded (and from where), which were incompatible or failed, and the hooks report. */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/** Writes the plugin list followed by the hooks report of `bub hooks`; with `tools`, each plugin's tools too. */
export async function printPlugins(framework: BubFramework, out: { write(text: string): unknown }, options: { tools?: boolean } = {}): Promise<void> {
  const { printHookReport, incompatibility } = await import("./hooks.ts");
  out.write("Plugins:\n");
  for (const status of framework.pluginStatus) {
    const mismatch = status.ok ? null : incompatibility(status);
    if (mismatch) out.write(`  incompatible ${status.name} (${status.source}): ${mismatch}\n`);
    else out.write(`  ${status.ok ? "ok    " : "failed"} ${status.name} (${status.source})\n`);
  }
  if (options.tools) {
    const { toolsByPlugin } = await import("../../tools/global.ts");
    out.write("\nTools:\n");
    for (const [plugin, names] of toolsByPlugin(framework)) out.write(`  ${plugin}: ${names.join(", ")}\n`);
  }
  out.write("\nHooks:\n");
  printHookReport(framework, out);
}

/** Adds `bub plugins` to the program. */
export function registerPluginsCommand(app: Command, framework: BubFramework): void {
  app
    .command("plugins")
    .description("show the loaded plugins, plugins that are incompatible or failed to load, and every hook with its plugins")
    .option("--tools", "also list each plugin's tools (runtime names; the model sees . as _)")
    .addHelpText(
      "after",
      `
Examples:
  $ bub plugins
  $ bub plugins --tools                       # which plugin brought which tool
  $ BUB_PLUGINS=./my-plugin.ts bub plugins    # try a plugin file without installing it
  $ bub hooks                                 # the hooks report alone`,
    )
    .action(async (options: { tools?: boolean }) => {
      await printPlugins(framework, process.stdout, options);
    });
}
