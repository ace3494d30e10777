/**
 * Plugins the user listed by name (`BUB_PLUGINS`, `plugins:` in config.yml) that did not
 * load: `bub run` and `bub gateway` refuse to start without them (exit 1), while an
 * installed plugin that fails is only reported and skipped.
 */
import type { BubFramework } from "../../kernel/framework.ts";
import { errorLine } from "../error-line.ts";

/** One `bub: …` line for each listed plugin that failed to load or initialise; "" when none did. */
export function listedPluginFailures(framework: BubFramework): string {
  return framework.pluginStatus
    .filter((status) => !status.ok && status.source === "config")
    .map((status) => {
      const reason = (status.error?.message ?? "unknown error").trim().split("\n")[0];
      const todo = reason.includes(" — ") ? "" : " — fix it, or take it out of BUB_PLUGINS (or plugins: in config.yml)";
      return errorLine(`plugin '${status.name}'${status.from ? ` (${status.from})` : ""} listed in BUB_PLUGINS or config.yml did not load: ${reason}${todo}`);
    })
    .join("");
}
