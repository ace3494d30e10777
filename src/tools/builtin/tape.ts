/** `tape.info`, `tape.search`, `tape.handoff`, `tape.anchors`, `tape.reset` and `spill.read`. */
import { z } from "zod";
import { contextUsageWithSettings, formatContextUsage } from "../../cost/context-budget.ts";
import { pythonJson } from "../../tape/python-format.ts";
import { spillRead } from "../../tape/spill.ts";
import { defineTool, type Tool } from "../tool.ts";
import { tapeOf } from "./context.ts";

/** Marks a search result, so a search never matches its own earlier output. */
const SEARCH_MARKER = "[tape.search]";

function pythonValue(value: unknown): string {
  return value === null || value === undefined ? "None" : String(value);
}

/** The tape tools. */
export function tapeTools(): Tool[] {
  const info = defineTool({
    name: "tape.info",
    description: "Show the size of the current tape: entries, anchors, entries since the last anchor, the last token usage and the share of the context window used.",
    context: true,
    async run(_args, context) {
      const tape = tapeOf(context);
      const summary = await tape.info();
      const agent = context.agent;
      const used = await contextUsageWithSettings(await tape.search(tape.query()), (path) => agent?.configValue(path));
      const rate = summary.lastTokenCacheHitRate === null ? "unknown (no cached-token count reported yet)" : `${(summary.lastTokenCacheHitRate * 100).toFixed(2)}%`;
      return (
        `name: ${summary.name}\n` +
        `entries: ${summary.entries}\n` +
        `anchors: ${summary.anchors}\n` +
        `last_anchor: ${pythonValue(summary.lastAnchor)}\n` +
        `entries_since_last_anchor: ${summary.entriesSinceLastAnchor}\n` +
        `last_token_usage: ${pythonValue(summary.lastTokenUsage)}\n` +
        `last_token_cache_hit_rate: ${rate}\n` +
        `context_used: ${formatContextUsage(used)}`
      );
    },
  });

  const search = defineTool({
    name: "tape.search",
    description: "Search the current tape for entries containing the query text, newest first.",
    parameters: () => z.object({
      query: z.string().describe("Text to look for (case-insensitive)."),
      limit: z.number().int().positive().default(20).describe("Most entries to return."),
      start: z.string().nullable().optional().describe("Earliest date, ISO format (optional)."),
      end: z.string().nullable().optional().describe("Latest date, ISO format (optional)."),
      kinds: z
        .array(z.string())
        .default(["message", "tool_result"])
        .describe("Entry kinds to search: event, anchor, system, message, tool_call, tool_result, error."),
    }),
    context: true,
    async run({ query, limit, start, end, kinds }, context) {
      const tape = tapeOf(context);
      let builder = tape.query().text(query).kinds(...kinds).limit(limit);
      if (start || end) builder = builder.betweenDates(start || undefined, end || undefined);
      const found = await tape.search(builder);
      const lines: string[] = [];
      for (const entry of found) {
        const line = pythonJson({ date: entry.date, content: entry.payload });
        if (!line.includes(SEARCH_MARKER)) lines.push(line);
      }
      const head = `${SEARCH_MARKER}: ${lines.length} matches (${found.length - lines.length} filtered)`;
      return [head, ...lines].join("\n");
    },
  });

  const handoff = defineTool({
    name: "tape.handoff",
    description: "Close a phase of work: add an anchor with a summary; later context starts from it.",
    parameters: () => z.object({
      name: z.string().default("handoff").describe("Anchor name, e.g. phase-1."),
      summary: z.string().default("").describe("What was done and what comes next."),
    }),
    context: true,
    async run({ name, summary }, context) {
      await tapeOf(context).handoff(name, { summary });
      return `anchor added: ${name}`;
    },
  });

  const anchors = defineTool({
    name: "tape.anchors",
    description: "List the last 20 anchors of the current tape.",
    context: true,
    async run(_args, context) {
      const found = await tapeOf(context).anchors();
      return found.length === 0 ? "(no anchors)" : found.map((anchor) => `- ${anchor.name}`).join("\n");
    },
  });

  const reset = defineTool({
    name: "tape.reset",
    description: "Empty the current tape and start it again, optionally archiving it first.",
    parameters: () => z.object({ archive: z.boolean().default(false).describe("Write the tape to an archive file first.") }),
    context: true,
    run: ({ archive }, context) => tapeOf(context).reset({ archive }),
  });

  return [info, search, reset, handoff, anchors];
}

/** The `spill.read` tool. */
export function spillTools(): Tool[] {
  const spill = defineTool({
    name: "spill.read",
    description: "Read a tool result that was too large and spilled: count chunks (at most 4) from cursor, or from the end.",
    parameters: () => z.object({
      handle: z.string().describe("The handle printed in the spill notice."),
      cursor: z.number().int().default(0).describe("Chunks to skip (from the start, or from the end with from_end)."),
      count: z.number().int().default(1).describe("Chunks to read, 1 to 4."),
      from_end: z.boolean().default(false).describe("Count the cursor from the last chunk backwards."),
    }),
    context: true,
    run: ({ handle, cursor, count, from_end }, context) => spillRead(tapeOf(context), { handle, cursor, count, fromEnd: from_end }),
  });

  return [spill];
}
