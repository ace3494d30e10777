/**
 * The MCP servers of one framework: read from the configuration, connected together the
 * first time a turn needs the tool list, kept for the process, closed when the framework
 * shuts down. A server that fails is recorded (and logged) with its reason; the others and
 * the turn carry on.
 */
import { stat } from "node:fs/promises";
import { createLogger } from "../kernel/log.ts";
import type { Tool } from "../tools/tool.ts";
import { loadMcpConfig, workspaceMcpFile, type McpConfigProblem, type McpServerConfig, type McpSource } from "./config.ts";
import type { McpConnection } from "./connection.ts";

const log = createLogger("bub:mcp");

/** Where a server stands. */
export type McpServerState = "connected" | "failed" | "disabled" | "closed";

/** One server as `bub mcp list` and `bub hooks` report it. */
export interface McpServerStatus {
  readonly name: string;
  /** `home`, `workspace`, or null for a problem with a whole file. */
  readonly source: McpSource | null;
  readonly file: string;
  /** `stdio` or `http`; null when the entry could not be read. */
  readonly transport: "stdio" | "http" | null;
  readonly state: McpServerState;
  /** Why it failed or closed. */
  readonly error?: string;
  /** Runtime names of its tools (`mcp.<server>.<tool>`). */
  readonly tools: readonly string[];
}

/** What a manager needs from its framework. */
export interface McpManagerOptions {
  readonly home: string;
  readonly workspace: string;
  readonly env: NodeJS.ProcessEnv;
  /** Whether the workspace's `.mcp.json` may be used. */
  readonly trusted: boolean;
  /** The registry the servers' tools are added to. */
  readonly registry: () => Promise<{ register(tool: Tool): () => void }>;
}

interface Entry {
  readonly config: McpServerConfig;
  state: McpServerState;
  error?: string;
  connection?: McpConnection;
  tools: string[];
  unregister: (() => void)[];
}

/** The MCP servers of one framework. */
export class McpManager {
  readonly #options: McpManagerOptions;
  #entries: Entry[] = [];
  #problems: McpConfigProblem[] = [];
  #started: Promise<void> | null = null;
  #closed = false;

  constructor(options: McpManagerOptions) {
    this.#options = options;
  }

  /** The workspace's `.mcp.json` when it exists but is not used because the workspace is not trusted. */
  async ignoredWorkspaceFile(): Promise<string | null> {
    if (this.#options.trusted) return null;
    const file = workspaceMcpFile(this.#options.workspace);
    return (await stat(file).then((found) => found.isFile()).catch(() => false)) ? file : null;
  }

  /**
   * Connects every configured server (once; later calls wait for the same start) and
   * registers the tools of those that answer. Never throws: failures are recorded.
   */
  ensureStarted(): Promise<void> {
    if (this.#closed && this.#started === null) return Promise.resolve();
    return (this.#started ??= this.#start());
  }

  async #start(): Promise<void> {
    let config: Awaited<ReturnType<typeof loadMcpConfig>>;
    try {
      config = await loadMcpConfig({ home: this.#options.home, workspace: this.#options.workspace, trusted: this.#options.trusted });
    } catch (error) {
      log.warn("mcp.config.failed", error);
      return;
    }
    this.#problems = [...config.problems];
    for (const problem of config.problems) log.warn(`mcp.server.failed server=${problem.name ?? "(file)"} file=${problem.file}: ${problem.message}`);
    this.#entries = config.servers.map((server) => ({ config: server, state: server.disabled ? "disabled" : "closed", tools: [], unregister: [] }));
    const started = performance.now();
    await Promise.all(this.#entries.filter((entry) => !entry.config.disabled).map((entry) => this.#connect(entry)));
    const connected = this.#entries.filter((entry) => entry.state === "connected").length;
    log.info(`mcp.started servers=${connected}/${this.#entries.length} elapsed_ms=${Math.round(performance.now() - started)}`);
  }

  async #connect(entry: Entry): Promise<void> {
    const name = entry.config.name;
    try {
      const [{ connectMcpServer }, { mcpTool, mcpToolName }, registry] = await Promise.all([import("./connection.ts"), import("./tools.ts"), this.#options.registry()]);
      const connection = await connectMcpServer(entry.config, { env: this.#options.env, workspace: this.#options.workspace });
      if (this.#closed) {
        await connection.close();
        return;
      }
      entry.connection = connection;
      entry.state = "connected";
      const taken = new Set<string>();
      for (const info of connection.tools) {
        const runtimeName = mcpToolName(name, info.name, taken);
        taken.add(runtimeName);
        const tool = mcpTool({
          name: runtimeName,
          server: name,
          tool: info.name,
          description: info.description,
          inputSchema: info.inputSchema,
          call: (tool, args, signal) => connection.callTool(tool, args, signal),
        });
        entry.tools.push(runtimeName);
        entry.unregister.push(registry.register(tool));
      }
      log.info(`mcp.server.connected server=${name} transport=${entry.config.transport} tools=${entry.tools.length}`);
    } catch (error) {
      entry.state = "failed";
      entry.error = error instanceof Error ? error.message : String(error);
      log.warn(`mcp.server.failed server=${name} source=${entry.config.source}: ${entry.error}`);
    }
  }

  /** Every configured server (and every unreadable entry or file) with its state and tools. */
  statuses(): McpServerStatus[] {
    const servers: McpServerStatus[] = this.#entries.map((entry) => {
      const closedReason = entry.connection?.closedReason ?? null;
      const state: McpServerState = entry.state === "connected" && closedReason !== null ? "closed" : entry.state;
      const error = entry.error ?? (state === "closed" && closedReason !== null ? closedReason : undefined);
      return {
        name: entry.config.name,
        source: entry.config.source,
        file: entry.config.file,
        transport: entry.config.transport,
        state,
        ...(error === undefined ? {} : { error }),
        tools: [...entry.tools],
      };
    });
    const problems: McpServerStatus[] = this.#problems.map((problem) => ({
      name: problem.name ?? "(file)",
      source: null,
      file: problem.file,
      transport: null,
      state: "failed",
      error: problem.message,
      tools: [],
    }));
    return [...problems, ...servers];
  }

  /** Closes every connection and removes the servers' tools; later starts do nothing. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#started?.catch(() => {});
    await Promise.all(
      this.#entries.map(async (entry) => {
        for (const unregister of entry.unregister) unregister();
        entry.unregister = [];
        const connection = entry.connection;
        if (!connection) return;
        entry.connection = undefined;
        if (entry.state === "connected") entry.state = "closed";
        try {
          await connection.close();
        } catch (error) {
          log.debug(`mcp.server.close_failed server=${entry.config.name}`, error);
        }
      }),
    );
  }
}
