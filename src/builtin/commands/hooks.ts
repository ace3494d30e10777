import type { BubFramework } from "../../kernel/framework.ts";

/**
 * Writes `bub hooks`: one line per hook with its plugins in call order, then every plugin
 * that failed to load with its error.
 */
export function printHookReport(framework: BubFramework, out: { write(text: string): unknown }): void {
  const report = framework.hookReport();
  const hooks = Object.keys(report);
  if (hooks.length === 0) out.write("(no hook implementations)\n");
  for (const hook of hooks) out.write(`${hook}: ${report[hook]!.join(", ")}\n`);
  const failed = framework.pluginStatus.filter((status) => !status.ok);
  if (failed.length > 0) {
    out.write("\nFailed plugins:\n");
    for (const status of failed) out.write(`${status.name} (${status.source}): ${status.error?.message ?? "unknown error"}\n`);
  }
}
