/**
 * MCP tools as bub tools: `mcp.<server>.<tool>` (the model sees `mcp_<server>_<tool>`) with
 * the server's own JSON schema; the server validates the arguments, and its result becomes
 * text for the model.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { defineTool, toModelToolName, type Tool } from "../tools/tool.ts";

/** The longest tool name OpenAI-compatible APIs accept. */
const MAX_MODEL_NAME = 64;

/** What a tool name part may hold: letters, digits, `_`, `-` (and `.` inside a tool's own name). */
function namePart(text: string, keepDots: boolean): string {
  const cleaned = text.replace(keepDots ? /[^A-Za-z0-9_.-]/g : /[^A-Za-z0-9_-]/g, "_").replace(/^\.+|\.+$/g, "");
  return cleaned === "" ? "_" : cleaned;
}

/**
 * The runtime name of a server's tool: `mcp.<server>.<tool>`, with characters models refuse
 * replaced by `_`, shortened (with a hash of the full name) to fit 64 characters as the model
 * sees it, and made unique among `taken`.
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  let name = `mcp.${namePart(server, false)}.${namePart(tool, true)}`;
  if (name.length > MAX_MODEL_NAME) {
    const hash = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, 8);
    name = `${name.slice(0, MAX_MODEL_NAME - hash.length - 1)}-${hash}`;
  }
  let unique = name;
  for (let index = 2; taken.has(unique) || taken.has(toModelToolName(unique)); index++) unique = `${name.slice(0, MAX_MODEL_NAME - String(index).length - 1)}-${index}`;
  return unique;
}

/** The server's input schema as the model gets it: always an object with `properties`. */
export function modelInputSchema(schema: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = typeof schema === "object" && schema !== null && !Array.isArray(schema) ? { ...schema } : {};
  delete copy.$schema;
  if (copy.type === undefined) copy.type = "object";
  if (copy.properties === undefined) copy.properties = {};
  return copy;
}

/** One content block as text. */
function blockText(block: CallToolResult["content"][number]): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
    case "resource":
      return "text" in block.resource && typeof block.resource.text === "string" ? block.resource.text : `[resource ${block.resource.uri}${block.resource.mimeType ? ` (${block.resource.mimeType})` : ""}]`;
    case "resource_link":
      return `[resource link ${block.uri}${block.name ? ` "${block.name}"` : ""}]`;
    default:
      return JSON.stringify(block);
  }
}

/** A tool result as the text the model reads: its content blocks, else its structured content as JSON. */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map(blockText).filter((text) => text !== "");
  if (parts.length > 0) return parts.join("\n");
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return "(no output)";
}

/** What an MCP tool calls to reach its server. */
export type McpCaller = (tool: string, args: Record<string, unknown>, signal: AbortSignal | undefined) => Promise<CallToolResult>;

/**
 * A bub tool that calls `tool` on a server. Its arguments are checked by the server (the
 * model is given the server's schema); a result marked `isError` fails the call with the
 * server's text, so the model sees it as a failed tool call.
 */
export function mcpTool(options: { name: string; server: string; tool: string; description: string | undefined; inputSchema: unknown; call: McpCaller }): Tool {
  const { server, tool, call } = options;
  const description = options.description?.trim() || `${tool} (MCP server ${server})`;
  return defineTool({
    name: options.name,
    description,
    parameters: () => z.looseObject({}),
    inputSchema: Object.freeze(modelInputSchema(options.inputSchema)),
    async run(args, { signal }) {
      const result = await call(tool, args, signal);
      const text = resultText(result);
      if (result.isError === true) throw new Error(text);
      return text;
    },
  });
}
