/**
 * MCP server configuration: the common `{"mcpServers": {...}}` JSON shape, read from
 * `<BUB_HOME>/mcp.json` and (only for a trusted workspace) the workspace's `.mcp.json`.
 * A workspace server replaces a home server of the same name. `${NAME}` and
 * `${NAME:-default}` in `command`, `args`, `url`, `env` and `headers` are filled from the
 * environment when a server starts.
 */
import { join } from "node:path";
import { FileRefusedError, readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "../config/bounded-file.ts";
import { errorCode, errorMessage } from "../config/thrown.ts";
import { isRecord } from "../kernel/guards.ts";

/** Where a server's definition came from. */
export type McpSource = "home" | "workspace";

/** A server started as a child process, speaking JSON-RPC on its stdin/stdout. */
export interface McpStdioServer {
  readonly transport: "stdio";
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Working directory; default the workspace. */
  readonly cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer {
  readonly transport: "http";
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** One configured server, before variables are expanded. */
export type McpServerConfig = (McpStdioServer | McpHttpServer) & {
  /** The key under `mcpServers`. */
  readonly name: string;
  readonly source: McpSource;
  /** The file it came from. */
  readonly file: string;
  /** `"disabled": true`: listed, never started. */
  readonly disabled: boolean;
  /** Seconds to wait for the server to start and list its tools, and for each call (default 60). */
  readonly timeoutSeconds: number;
};

/** A server entry that could not be understood; reported like a server that failed to start. */
export interface McpConfigProblem {
  /** The server's name, or null when the whole file is unusable. */
  readonly name: string | null;
  readonly file: string;
  readonly message: string;
}

/** What the configuration files hold. */
export interface McpConfig {
  readonly servers: readonly McpServerConfig[];
  readonly problems: readonly McpConfigProblem[];
}

/** The default wait for a server to start and for each tool call, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 60;

/** `<home>/mcp.json` */
export function homeMcpFile(home: string): string {
  return join(home, "mcp.json");
}

/** `<workspace>/.mcp.json` */
export function workspaceMcpFile(workspace: string): string {
  return join(workspace, ".mcp.json");
}

function stringMap(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new Error(`"${field}" must be an object of strings`);
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string" && typeof item !== "number" && typeof item !== "boolean") throw new Error(`"${field}.${key}" must be a string`);
    result[key] = String(item);
  }
  return result;
}

/** One `mcpServers` entry as a server config; throws a message naming the bad field. */
function parseServer(name: string, value: unknown, source: McpSource, file: string): McpServerConfig {
  if (!isRecord(value)) throw new Error("must be an object");
  const type = value.type === undefined ? (value.url !== undefined ? "http" : "stdio") : value.type;
  const disabled = value.disabled === true;
  const timeout = value.timeout ?? DEFAULT_TIMEOUT_SECONDS;
  if (typeof timeout !== "number" || !(timeout > 0)) throw new Error(`"timeout" must be a positive number of seconds`);
  const common = { name, source, file, disabled, timeoutSeconds: timeout };
  if (type === "stdio") {
    if (typeof value.command !== "string" || value.command.trim() === "") throw new Error(`needs a "command" (or a "url" for an HTTP server)`);
    const args = value.args ?? [];
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string")) throw new Error(`"args" must be a list of strings`);
    if (value.cwd !== undefined && typeof value.cwd !== "string") throw new Error(`"cwd" must be a string`);
    const server = { ...common, transport: "stdio" as const, command: value.command, args, env: stringMap(value.env, "env") };
    return typeof value.cwd === "string" ? { ...server, cwd: value.cwd } : server;
  }
  if (type === "http" || type === "streamable-http" || type === "streamableHttp") {
    if (typeof value.url !== "string" || value.url.trim() === "") throw new Error(`needs a "url"`);
    return { ...common, transport: "http", url: value.url, headers: stringMap(value.headers, "headers") };
  }
  if (type === "sse") throw new Error(`uses the old SSE transport, which bub does not speak; use the server's Streamable HTTP endpoint ("type": "http")`);
  throw new Error(`has an unknown "type" ${JSON.stringify(type)}; use "stdio" or "http"`);
}

/**
 * Reads one file; a missing file is an empty configuration. One that is not a regular file or
 * is larger than {@link SETTINGS_FILE_MAX_BYTES} is a problem saying so, never read.
 */
export async function readMcpFile(file: string, source: McpSource): Promise<McpConfig> {
  let text: string;
  try {
    text = await readBoundedTextFile(file, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: source === "workspace" ? ".mcp.json" : "mcp.json" });
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return { servers: [], problems: [] };
    if (error instanceof FileRefusedError) return { servers: [], problems: [{ name: null, file, message: error.message }] };
    return { servers: [], problems: [{ name: null, file, message: `cannot be read: ${errorMessage(error)}` }] };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { servers: [], problems: [{ name: null, file, message: `is not valid JSON: ${errorMessage(error)}` }] };
  }
  const entries = isRecord(data) ? data.mcpServers : undefined;
  if (!isRecord(entries)) return { servers: [], problems: [{ name: null, file, message: `has no "mcpServers" object` }] };
  const servers: McpServerConfig[] = [];
  const problems: McpConfigProblem[] = [];
  for (const [name, value] of Object.entries(entries)) {
    try {
      servers.push(parseServer(name, value, source, file));
    } catch (error) {
      problems.push({ name, file, message: errorMessage(error) });
    }
  }
  return { servers, problems };
}

/**
 * The servers of `<home>/mcp.json` and, when `trusted`, `<workspace>/.mcp.json` (whose
 * servers replace home servers of the same name).
 */
export async function loadMcpConfig(options: { home: string; workspace: string; trusted: boolean }): Promise<McpConfig> {
  const files = [readMcpFile(homeMcpFile(options.home), "home")];
  if (options.trusted) files.push(readMcpFile(workspaceMcpFile(options.workspace), "workspace"));
  const read = await Promise.all(files);
  const byName = new Map<string, McpServerConfig>();
  const problems = new Map<string, McpConfigProblem>();
  const fileProblems: McpConfigProblem[] = [];
  for (const config of read) {
    for (const server of config.servers) {
      problems.delete(server.name);
      byName.set(server.name, server);
    }
    for (const problem of config.problems) {
      if (problem.name === null) fileProblems.push(problem);
      else {
        byName.delete(problem.name);
        problems.set(problem.name, problem);
      }
    }
  }
  return { servers: [...byName.values()], problems: [...fileProblems, ...problems.values()] };
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** A `${NAME}` that names an unset variable and has no default. */
export class MissingVariableError extends Error {
  readonly variable: string;
  constructor(variable: string, field: string) {
    super(`${field} uses \${${variable}}, which is not set — set ${variable} in the environment (or .env), or give a default: \${${variable}:-value}`);
    this.variable = variable;
  }
}

/** `text` with `${NAME}` / `${NAME:-default}` filled from `env`. */
export function expandVariables(text: string, env: NodeJS.ProcessEnv, field: string): string {
  return text.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
    if (fallback !== undefined) return fallback;
    throw new MissingVariableError(name, field);
  });
}

/** Whether `text` takes anything from the environment. */
export function usesVariables(text: string): boolean {
  VARIABLE.lastIndex = 0;
  return VARIABLE.test(text);
}

function expandMap(map: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv, field: string): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([key, value]) => [key, expandVariables(value, env, `${field}.${key}`)]));
}

/** The server with its variables filled in; throws {@link MissingVariableError}. */
export function expandServer(server: McpServerConfig, env: NodeJS.ProcessEnv): McpServerConfig {
  if (server.transport === "http") {
    return { ...server, url: expandVariables(server.url, env, "url"), headers: expandMap(server.headers, env, "headers") };
  }
  const expanded = {
    ...server,
    command: expandVariables(server.command, env, "command"),
    args: server.args.map((arg, index) => expandVariables(arg, env, `args[${index}]`)),
    env: expandMap(server.env, env, "env"),
  };
  return server.cwd === undefined ? expanded : { ...expanded, cwd: expandVariables(server.cwd, env, "cwd") };
}
