/**
 * The MCP plugin: registered by `createBub` when `<BUB_HOME>/mcp.json` or the workspace's
 * `.mcp.json` exists. Its `loadState` connects the servers the first time a turn runs (so
 * the tools are registered before the agent reads the tool list), and the framework's
 * shutdown closes them. The SDK is imported only then.
 */
import type { BubFramework } from "../kernel/framework.ts";
import type { BubPlugin } from "../kernel/hooks.ts";
import { McpManager } from "./manager.ts";

const managers = new WeakMap<object, McpManager>();

/** The MCP servers of `framework`, or null when it has no MCP configuration. */
export function mcpOf(framework: object): McpManager | null {
  return managers.get(framework) ?? null;
}

/** A plugin factory that gives `framework` its MCP servers; `trusted`: whether the workspace's `.mcp.json` may be used. */
export function createMcpPlugin(options: { trusted: boolean }): (framework: BubFramework) => BubPlugin {
  return (framework) => {
    const manager = new McpManager({
      home: framework.home,
      workspace: framework.workspace,
      env: framework.env,
      trusted: options.trusted,
      // The framework's tool registry (the tools layer is loaded with the agent anyway).
      registry: async () => (await import("../tools/global.ts")).toolsOf(framework),
    });
    managers.set(framework, manager);
    framework.onShutdown(() => manager.close());
    return {
      name: "mcp",
      async loadState() {
        await manager.ensureStarted();
        return undefined;
      },
    };
  };
}
