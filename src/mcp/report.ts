/** What `bub mcp list` and `bub hooks` print about the MCP servers. */
import type { McpManager, McpServerStatus } from "./manager.ts";

/** Where the configuration files are, for the hint when there are none. */
export interface McpFiles {
  readonly home: string;
  readonly workspace: string;
}

function notUsedLine(file: string): string {
  return `${file} is not used: this workspace is not trusted (run \`bub trust\` in it to use its MCP servers)\n`;
}

function statusLine(status: McpServerStatus): string {
  const where = status.source === null ? status.file : `${status.transport}, ${status.source}`;
  if (status.state === "connected") return `${status.name} (${where}): connected, ${status.tools.length} tool${status.tools.length === 1 ? "" : "s"}`;
  if (status.state === "disabled") return `${status.name} (${where}): disabled`;
  return `${status.name} (${where}): ${status.state}${status.error ? ` — ${status.error}` : ""}`;
}

/**
 * Starts the servers (if this process has not yet) and writes one line per server with its
 * tools under it. Returns whether every server that is not disabled is connected.
 */
export async function printMcpList(manager: McpManager | null, files: McpFiles, out: { write(text: string): unknown }): Promise<boolean> {
  if (manager === null) {
    out.write(`No MCP servers configured. Add them to ${files.home} (or a trusted workspace's ${files.workspace}); see docs/mcp.md.\n`);
    return true;
  }
  await manager.ensureStarted();
  const statuses = manager.statuses();
  const ignored = await manager.ignoredWorkspaceFile();
  if (ignored) out.write(notUsedLine(ignored));
  if (statuses.length === 0 && !ignored) out.write(`No MCP servers configured in ${files.home}.\n`);
  for (const status of statuses) {
    out.write(`${statusLine(status)}\n`);
    for (const tool of status.tools) out.write(`  ${tool}\n`);
  }
  return statuses.every((status) => status.state === "connected" || status.state === "disabled");
}

/** For `bub hooks`: servers that failed to start (after trying them) and an ignored `.mcp.json`. */
export async function printMcpFailures(manager: McpManager, out: { write(text: string): unknown }): Promise<void> {
  await manager.ensureStarted();
  const failed = manager.statuses().filter((status) => status.state === "failed");
  const ignored = await manager.ignoredWorkspaceFile();
  if (failed.length === 0 && !ignored) return;
  out.write("\nMCP servers:\n");
  if (ignored) out.write(notUsedLine(ignored));
  for (const status of failed) out.write(`${statusLine(status)}\n`);
}
