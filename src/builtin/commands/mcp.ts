/** `bub mcp list`: the configured MCP servers, whether they start, and their tools (docs/mcp.md). */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/** Writes the server list (starting the servers); returns the exit code: 1 when a server failed. */
export async function runMcpList(framework: BubFramework, out: { write(text: string): unknown }): Promise<number> {
  const [{ mcpOf }, { printMcpList }, { homeMcpFile, workspaceMcpFile }] = await Promise.all([
    import("../../mcp/plugin.ts"),
    import("../../mcp/report.ts"),
    import("../../mcp/config.ts"),
  ]);
  const ok = await printMcpList(mcpOf(framework), { home: homeMcpFile(framework.home), workspace: workspaceMcpFile(framework.workspace) }, out);
  return ok ? 0 : 1;
}

/** Adds `bub mcp` (with `list`) to the program. */
export function registerMcpCommand(app: Command, framework: BubFramework): void {
  const mcp = app.command("mcp").description("the MCP servers whose tools the agent can use");
  mcp
    .command("list")
    .description("start the configured MCP servers and show each one's status and tools")
    .addHelpText(
      "after",
      `
Servers come from <BUB_HOME>/mcp.json and, in a trusted workspace, its .mcp.json (the
"mcpServers" shape). Exits 1 when a server fails to start.

Example:
  $ bub mcp list`,
    )
    .action(async () => {
      const code = await runMcpList(framework, process.stdout);
      if (code !== 0) process.exitCode = code;
    });
}
