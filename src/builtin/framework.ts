import { BubFramework as KernelFramework, type BubFrameworkOptions } from "../kernel/framework.ts";
import { createBuiltinPlugin } from "./plugin.ts";

/**
 * The framework with the builtin plugin (agent, tools, tape store, channels) registered
 * first. Pass another `builtin` to replace it entirely.
 *
 * ```ts
 * const bub = new BubFramework({ workspace: "." });
 * await bub.loadPlugins();
 * ```
 */
export class BubFramework extends KernelFramework {
  constructor(options: BubFrameworkOptions = {}) {
    super({ builtin: (framework) => createBuiltinPlugin(framework as KernelFramework), ...options });
  }
}
