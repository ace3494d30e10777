/**
 * The process-wide tool registry: the builtin tools plus whatever plugins register. The
 * registry is built on first use, so importing this module costs nothing.
 */
import { builtinTools } from "./builtin/index.ts";
import { createToolRegistry, type ToolRegistry } from "./registry.ts";
import type { Tool } from "./tool.ts";

let registry: ToolRegistry | null = null;

function shared(): ToolRegistry {
  return (registry ??= createToolRegistry(builtinTools()));
}

/**
 * The default {@link ToolRegistry}, pre-filled with the builtin tools. The builtin agent
 * offers these tools; plugins add theirs with {@link registerTool}.
 */
export const toolRegistry: ToolRegistry = Object.freeze({
  register: (tool: Tool) => shared().register(tool),
  get: (name: string) => shared().get(name),
  has: (name: string) => shared().has(name),
  list: () => shared().list(),
  names: () => shared().names(),
  resolveToolName: (name: string) => shared().resolveToolName(name),
  resolveToolNames: (names: Iterable<string> | null, exclude?: Iterable<string>) => shared().resolveToolNames(names, exclude),
  select: (names: Iterable<string> | null) => shared().select(names),
  modelTools: (names?: Iterable<string> | null) => shared().modelTools(names),
  renderPrompt: (names?: Iterable<string> | null) => shared().renderPrompt(names),
});

/**
 * Adds a tool to the default registry (a tool with the same name is replaced). Returns a
 * function that removes it again.
 *
 * ```ts
 * import { defineTool, registerTool } from "bub-ts";
 * import { z } from "zod";
 *
 * const dispose = registerTool(
 *   defineTool({ name: "clock.now", description: "Current UTC time", run: () => new Date().toISOString() }),
 * );
 * ```
 */
export function registerTool(tool: Tool): () => void {
  return shared().register(tool);
}
