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
  // Registered from a plugin's factory: remembered as that plugin's (`bub plugins --tools`).
  const plugin = "registeringPlugin" in framework ? framework.registeringPlugin : null;
  if (isNamed(plugin)) {
    let owners = toolOwners.get(framework);
    if (!owners) toolOwners.set(framework, (owners = new Map()));
    owners.set(tool.name, plugin);
  }
  return toolsOf(framework).register(tool);
}

function isNamed(value: unknown): value is { readonly name: string } {
  return typeof value === "object" && value !== null && "name" in value && typeof value.name === "string";
}

const toolOwners = new WeakMap<object, Map<string, { readonly name: string }>>();

/**
 * `framework`'s tools by the plugin that registered them, in registration order: `builtin`
 * for the builtin tools, the plugin whose factory called {@link registerTool}, else
 * `(unknown)` (a tool registered later, from a hook, say).
 */
export function toolsByPlugin(framework: object): Map<string, string[]> {
  const builtin = new Set(builtinTools().map((tool) => tool.name));
  const owners = toolOwners.get(framework);
  const grouped = new Map<string, string[]>();
  for (const name of toolsOf(framework).names()) {
    const owner = owners?.get(name)?.name ?? (builtin.has(name) ? "builtin" : "(unknown)");
    let list = grouped.get(owner);
    if (!list) grouped.set(owner, (list = []));
    list.push(name);
  }
  return grouped;
}
