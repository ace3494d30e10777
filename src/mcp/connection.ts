/**
 * One connection to an MCP server through the official SDK: a child process over stdio or
 * a Streamable HTTP endpoint. Loaded only when a turn first needs MCP tools (or
 * `bub mcp list` / `bub hooks` asks), so nothing here costs a start-up.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { errorCode } from "../config/thrown.ts";
import { isSecretKey, rememberSecrets, type Secret } from "../config/redaction.ts";
import { createLogger } from "../kernel/log.ts";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { expandServer, usesVariables, type McpServerConfig } from "./config.ts";

const log = createLogger("bub:mcp");

const PackageVersion = z.object({ version: z.string() });

/** bub's version, as the client names itself to servers (package.json two folders up, in src/ and dist/ alike). */
function clientVersion(): string {
  try {
    return PackageVersion.parse(JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"))).version;
  } catch {
    return "0.0.0";
  }
}

/** How much of a stdio server's stderr is kept to explain a failure. */
const STDERR_TAIL_BYTES = 2048;

/** A tool as the server lists it. */
export type McpToolInfo = McpTool;

/** An open connection; {@link connectMcpServer} makes one. */
export interface McpConnection {
  readonly tools: readonly McpToolInfo[];
  /** Set once the server went away (process exit, transport error); calls then fail with it. */
  readonly closedReason: string | null;
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** The values of a server's configuration that must never reach a log or a tape. */
export function serverSecrets(raw: McpServerConfig, expanded: McpServerConfig): Secret[] {
  const secrets: Secret[] = [];
  if (raw.transport === "http" && expanded.transport === "http") {
    for (const [key, value] of Object.entries(expanded.headers)) secrets.push({ name: `mcp.${raw.name}.headers.${key}`, value });
  }
  if (raw.transport === "stdio" && expanded.transport === "stdio") {
    for (const [key, value] of Object.entries(expanded.env)) {
      if (isSecretKey(key) || usesVariables(raw.env[key] ?? "")) secrets.push({ name: `mcp.${raw.name}.env.${key}`, value });
    }
  }
  return secrets;
}

/** The environment a stdio server starts with: the SDK's safe minimum (PATH, HOME, ...) from `env`, then its own `env`. */
function childEnvironment(env: NodeJS.ProcessEnv, own: Readonly<Record<string, string>>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const key of DEFAULT_INHERITED_ENV_VARS) {
    const value = env[key];
    if (value !== undefined && !value.startsWith("()")) result[key] = value;
  }
  return { ...result, ...own };
}

/** What `Client.callTool` resolves to: a current result, or the old protocol's `toolResult` form. */
type ToolAnswer = Awaited<ReturnType<Client["callTool"]>>;

/** True for a current result: one with a `content` array. */
function isCallToolResult(answer: ToolAnswer): answer is CallToolResult {
  return Array.isArray(answer.content);
}

/** A one-line reason for a failed start: the SDK's error, with what the server last wrote on stderr. */
function startFailure(error: unknown, server: McpServerConfig, stderrTail: string): Error {
  const code = errorCode(error);
  let message = error instanceof Error ? error.message : String(error);
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : undefined;
  if (server.transport === "stdio" && code === "ENOENT") message = `command not found: ${server.command}`;
  else if (/timed out/i.test(message)) message = `no answer within ${server.timeoutSeconds} s (raise "timeout" in its entry if it starts slowly)`;
  else if (server.transport === "http" && typeof code === "number" && code >= 100 && code < 600) message = `HTTP ${code}: ${message}`;
  else if (message === "fetch failed" && cause instanceof Error) message = `cannot reach the server: ${cause.message}`;
  const lastLine = stderrTail.trim().split("\n").filter(Boolean).at(-1);
  if (lastLine) message += ` (its stderr: ${lastLine.trim().slice(0, 300)})`;
  return new Error(message, { cause: error });
}

/**
 * Starts (or reaches) `server`, completes the MCP handshake and lists its tools.
 *
 * @throws Error with a one-line reason (command not found, no answer in time, HTTP
 *   status, the server's last stderr line, an unset `${NAME}`).
 */
export async function connectMcpServer(server: McpServerConfig, options: { env: NodeJS.ProcessEnv; workspace: string }): Promise<McpConnection> {
  const expanded = expandServer(server, options.env);
  rememberSecrets(serverSecrets(server, expanded));
  const timeout = expanded.timeoutSeconds * 1000;
  let stderrTail = "";
  let transport: Transport;
  if (expanded.transport === "stdio") {
    const stdio = new StdioClientTransport({
      command: expanded.command,
      args: [...expanded.args],
      env: childEnvironment(options.env, expanded.env),
      cwd: expanded.cwd ?? options.workspace,
      stderr: "pipe",
    });
    stdio.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_BYTES);
      for (const line of text.split("\n")) if (line.trim()) log.debug(`mcp.stderr server=${server.name} ${line.trimEnd()}`);
    });
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(expanded.url), { requestInit: { headers: { ...expanded.headers } } });
  }
  const client = new Client({ name: "bub", version: clientVersion() });
  let closedReason: string | null = null;
  client.onclose = () => {
    closedReason ??= `the server closed the connection${stderrTail.trim() ? ` (its stderr: ${stderrTail.trim().split("\n").at(-1)?.slice(0, 300)})` : ""}`;
  };
  client.onerror = (error) => log.debug(`mcp.transport.error server=${server.name}`, error);
  let tools: McpToolInfo[];
  try {
    await client.connect(transport, { timeout });
    tools = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
  } catch (error) {
    await client.close().catch(() => {});
    throw startFailure(error, expanded, stderrTail);
  }
  return {
    tools,
    get closedReason() {
      return closedReason;
    },
    async callTool(name, args, signal) {
      if (closedReason !== null) throw new Error(`MCP server '${server.name}' is gone: ${closedReason}; restart bub to start it again`);
      const result = await client.callTool({ name, arguments: args }, undefined, signal ? { signal, timeout } : { timeout });
      if (!isCallToolResult(result)) throw new Error(`MCP server '${server.name}' answered ${name} in the old toolResult form, which bub does not read`);
      return result;
    },
    async close() {
      closedReason ??= "closed";
      if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}
