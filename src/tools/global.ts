/**
 * Each framework's tool registry: the builtin tools plus whatever that framework's plugins
 * register. Two frameworks in one process never see each other's tools.
 */
import { builtinTools } from "./builtin/index.ts";
import { createToolRegistry, type ToolRegistry } from "./registry.ts";
import type { Tool } from "./tool.ts";

const registries = new WeakMap<object, ToolRegistry>();

/**
 * The {@link ToolRegistry} of `framework`, pre-filled with the builtin tools on first use.
 * The builtin agent offers these tools; plugins add theirs with {@link registerTool}.
 */
export function toolsOf(framework: object): ToolRegistry {
  let registry = registries.get(framework);
  if (!registry) registries.set(framework, (registry = createToolRegistry(builtinTools())));
  return registry;
}

/**
 * Adds a tool to `framework`'s registry (a tool with the same name is replaced). Returns a
 * function that removes it again.
 *
 * ```ts
 * import { defineTool, definePlugin, registerTool } from "bub-ts";
 *
 * export default (framework) => {
 *   registerTool(framework, defineTool({ name: "clock.now", description: "Current UTC time", run: () => new Date().toISOString() }));
 *   return definePlugin({ name: "clock" });
 * };
 * ```
 */
export function registerTool(framework: object, tool: Tool): () => void {
  return toolsOf(framework).register(tool);
}
