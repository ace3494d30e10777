/**
 * A Streamable HTTP MCP server built with the official SDK, on 127.0.0.1, for the MCP client
 * tests: tools `echo` (text), `add` (structured content), `fail` (an `isError` result) and
 * `slow` (waits until cancelled). It records each request's `authorization` header, and
 * refuses requests without `requiredAuthorization` when one is given.
 *
 *   node test/support/mcp-http-server.ts [port]   # prints its URL, runs until killed
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** A running server. */
export interface McpHttpServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The `authorization` header of every request, in order (undefined when absent). */
  readonly authorizations: (string | undefined)[];
  /** Names of the tools called, in order. */
  readonly calls: string[];
  close(): Promise<void>;
}

function tools(calls: string[]): McpServer {
  const server = new McpServer({ name: "bub-test-http", version: "1.0.0" });
  server.registerTool("echo", { description: "Echo the text back", inputSchema: { text: z.string().describe("what to echo") } }, async ({ text }) => {
    calls.push("echo");
    return { content: [{ type: "text", text: `echo: ${text}` }] };
  });
  server.registerTool(
    "add",
    { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    async ({ a, b }) => {
      calls.push("add");
      return { content: [], structuredContent: { sum: a + b } };
    },
  );
  server.registerTool("fail", { description: "Always fails" }, async () => {
    calls.push("fail");
    return { content: [{ type: "text", text: "the fail tool failed on purpose" }], isError: true };
  });
  server.registerTool("slow", { description: "Waits until cancelled" }, async (extra) => {
    calls.push("slow");
    await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }));
    return { content: [{ type: "text", text: "cancelled" }] };
  });
  return server;
}

async function body(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : JSON.parse(text);
}

/** Starts the server (stateless: a fresh MCP server per request) on 127.0.0.1. */
export async function startMcpHttpServer(options: { port?: number; requiredAuthorization?: string } = {}): Promise<McpHttpServer> {
  const authorizations: (string | undefined)[] = [];
  const calls: string[] = [];
  const http: Server = createServer(async (request, response) => {
    authorizations.push(request.headers.authorization);
    if (!request.url?.startsWith("/mcp")) {
      response.writeHead(404).end();
      return;
    }
    if (options.requiredAuthorization !== undefined && request.headers.authorization !== options.requiredAuthorization) {
      response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }));
      return;
    }
    if (request.method !== "POST") {
      response.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const server = tools(calls);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request, response, await body(request));
    } catch (error) {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startMcpHttpServer({ port: process.argv[2] ? Number(process.argv[2]) : 0 });
  process.stdout.write(`${server.url}\n`);
}
