/**
 * Between bub's turn and the Agent Client Protocol: an editor's prompt blocks as the text of
 * a turn, and the turn's stream events (text, reasoning, tool calls and their results) as
 * ACP `session/update` payloads.
 */
import { isAbsolute, resolve } from "node:path";
import type { ContentBlock, SessionUpdate, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { StreamEvent } from "../kernel/stream.ts";
import { isRecord } from "../kernel/guards.ts";

/** The text of a prompt: text blocks as they are, resources as tagged blocks, links as one line. */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "resource_link":
        parts.push(`[${block.name || "resource"}: ${block.uri}]`);
        break;
      case "resource":
        if ("text" in block.resource) parts.push(`<resource uri="${block.resource.uri}">\n${block.resource.text}\n</resource>`);
        else parts.push(`[resource: ${block.resource.uri}]`);
        break;
      default:
        parts.push(`[${block.type} not supported by bub]`);
    }
  }
  return parts.join("\n\n");
}

/** What kind of tool this is, for the editor's icon. */
export function toolKind(name: string): ToolKind {
  const runtime = name.replaceAll("_", ".");
  if (runtime === "bash") return "execute";
  if (runtime === "fs.read" || runtime === "spill.read" || runtime === "skill") return "read";
  if (runtime === "fs.write" || runtime === "fs.edit") return "edit";
  if (runtime === "web.fetch") return "fetch";
  if (runtime === "tape.search") return "search";
  return "other";
}

/** A call's arguments: parsed when the model sent JSON text. */
export function callArguments(raw: unknown): Record<string, unknown> {
  if (isRecord(raw)) return raw;
  if (typeof raw !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** A short title: the command for `bash`, the tool and its path for file tools, else the tool's name. */
export function toolTitle(name: string, args: Record<string, unknown>): string {
  if (name === "bash" && typeof args.cmd === "string") return args.cmd.length > 200 ? `${args.cmd.slice(0, 199)}…` : args.cmd;
  if (typeof args.path === "string") return `${name.replaceAll("_", ".")} ${args.path}`;
  if (typeof args.url === "string") return `${name.replaceAll("_", ".")} ${args.url}`;
  return name.replaceAll("_", ".");
}

/** The file a call works on, absolute (relative paths are the workspace's). */
export function toolLocations(args: Record<string, unknown>, workspace: string): ToolCallLocation[] {
  if (typeof args.path !== "string" || args.path === "") return [];
  return [{ path: isAbsolute(args.path) ? args.path : resolve(workspace, args.path) }];
}

/** One call of a `tool_call` event. */
export interface StreamedCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/** The calls of a `tool_call` event. */
export function streamedCalls(event: StreamEvent & { kind: "tool_call" }): StreamedCall[] {
  return event.data.tool_calls.map((call, index) => {
    const fn = isRecord(call.function) ? call.function : {};
    return { id: String(call.id ?? `call_${index}`), name: String(fn.name ?? call.name ?? ""), args: callArguments(fn.arguments ?? call.arguments) };
  });
}

/** A tool result as text, and whether it is the executor's failure record `{kind, message, details}`. */
function resultOf(result: unknown): { text: string; failed: boolean } {
  if (isRecord(result) && typeof result.kind === "string" && typeof result.message === "string") {
    const detail = isRecord(result.details) && typeof result.details.error === "string" ? `: ${result.details.error}` : "";
    return { text: `${result.message}${detail}`, failed: true };
  }
  return { text: typeof result === "string" ? result : JSON.stringify(result ?? null), failed: false };
}

/**
 * The session updates for one stream event. `calls` holds the calls of the step being run
 * (set by `tool_call`, read and cleared by `tool_result`, whose results come in call order).
 */
export function updatesFor(event: StreamEvent, calls: { current: StreamedCall[] }, workspace: string): SessionUpdate[] {
  switch (event.kind) {
    case "text":
      return event.data.delta === "" ? [] : [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: String(event.data.delta) } }];
    case "reasoning":
      return event.data.delta === "" ? [] : [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: String(event.data.delta) } }];
    case "tool_call":
      calls.current = streamedCalls(event);
      return calls.current.map((call) => ({
        sessionUpdate: "tool_call",
        toolCallId: call.id,
        title: toolTitle(call.name, call.args),
        kind: toolKind(call.name),
        status: "in_progress",
        rawInput: call.args,
        locations: toolLocations(call.args, workspace),
      }));
    case "tool_result": {
      const updates: SessionUpdate[] = event.data.tool_results.map((result, index) => {
        const { text, failed } = resultOf(result);
        return {
          sessionUpdate: "tool_call_update",
          toolCallId: calls.current[index]?.id ?? `call_${index}`,
          status: failed ? "failed" : "completed",
          content: [{ type: "content", content: { type: "text", text } }],
          rawOutput: result ?? null,
        };
      });
      calls.current = [];
      return updates;
    }
    default:
      return [];
  }
}
