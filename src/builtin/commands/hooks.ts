import type { BubFramework } from "../../kernel/framework.ts";
import type { PluginStatus } from "../../kernel/plugin-export.ts";
import { IncompatiblePluginError } from "../../kernel/plugin-api.ts";

/** The range an incompatible plugin asked for and what runs, in words: `wants plugin API ^2.0.0 (bub.api), running 1.0.0`. */
export function incompatibility(status: PluginStatus): string | null {
  return status.error instanceof IncompatiblePluginError ? status.error.summary : null;
}

/**
 * Writes `bub hooks`: one line per hook with its plugins in call order, then every plugin
 * not loaded because it asks for another plugin API, then every plugin that failed to load
 * with its error.
 */
export function printHookReport(framework: BubFramework, out: { write(text: string): unknown }): void {
  const report = framework.hookReport();
  const hooks = Object.entries(report);
  if (hooks.length === 0) out.write("(no hook implementations)\n");
  for (const [hook, plugins] of hooks) out.write(`${hook}: ${plugins.join(", ")}\n`);
  const notLoaded = framework.pluginStatus.filter((status) => !status.ok);
  const incompatible = notLoaded.flatMap((status) => {
    const summary = incompatibility(status);
    return summary === null ? [] : [`${status.name} (${status.source}): ${summary}\n`];
  });
  if (incompatible.length > 0) out.write(`\nIncompatible plugins (not loaded; each wants another version):\n${incompatible.join("")}`);
  const failed = notLoaded.filter((status) => incompatibility(status) === null);
  if (failed.length > 0) {
    out.write("\nFailed plugins:\n");
    for (const status of failed) out.write(`${status.name} (${status.source}): ${status.error?.message ?? "unknown error"}\n`);
  }
}
