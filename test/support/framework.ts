import { join } from "node:path";
import { BubFramework } from "../../src/kernel/framework.ts";
import { Settings, emptyConfigFile } from "../../src/config/settings.ts";

/** A kernel framework (no builtin plugin, no discovery) whose settings come from `env` only. */
export function kernelFramework(options: { env?: NodeJS.ProcessEnv; home?: string; workspace?: string } = {}): BubFramework {
  const env = options.env ?? {};
  const home = options.home ?? "/nonexistent-bub-home";
  return new BubFramework({ workspace: options.workspace ?? "/tmp", home, env, settings: new Settings(emptyConfigFile(join(home, "config.yml")), env) });
}
