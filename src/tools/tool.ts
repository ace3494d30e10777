/**
 * A tool: a name, a zod schema for its arguments, and the function that runs it.
 */
import { z } from "zod";
import type { TapeHandle } from "../kernel/tape-contract.ts";
import type { Sandbox } from "../kernel/sandbox.ts";
import type { TurnState } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import type { RuntimeAgent } from "./runtime-agent.ts";
import { isRecord } from "../kernel/guards.ts";

/** What a context tool receives besides its arguments. */
export interface ToolContext<TTape = TapeHandle> {
  /** The turn's session tape (a fork of it, merged back when the turn ends). */
  readonly tape: TTape;
  /** Run id of the model step that made the call (`run_command` for comma commands). */
  readonly runId: string;
  /** The turn state, shared by reference with the rest of the turn. */
  readonly state: TurnState;
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal;
  /** The turn's typed context (workspace, settings, logger, steering); absent for a context built by hand. */
  readonly turn?: TurnContext;
  /** The agent running the tool (its tools, model checks, subagent runs); absent outside an agent. */
  readonly agent?: RuntimeAgent;
  /**
   * Where the session's shell and file tools run: what `provideSandbox` answered for the
   * turn. Absent (a context built by hand): the host, in the turn's workspace.
   */
  readonly sandbox?: Sandbox;
}

/** What a tool without `context: true` receives besides its arguments. */
export interface ToolRunOptions {
  readonly signal?: AbortSignal;
}

/** What a tool's `run` receives besides its arguments: a {@link ToolContext} when `C` is `true` (`context: true`), else {@link ToolRunOptions}. */
export type ToolRunContext<C extends boolean, TTape = TapeHandle> = C extends true ? ToolContext<TTape> : ToolRunOptions;

/** The zod schema type accepted for tool parameters: an object schema. */
export type ToolParameters = z.ZodObject<z.core.$ZodLooseShape>;

/**
 * A registered tool. `run` receives arguments already validated by `parameters`; use
 * the executor (or {@link invokeTool}) to call a tool with raw arguments from a model.
 * `TContext` is what `run` takes besides them ({@link ToolRunContext}; either, by default).
 */
export interface Tool<
  TArgs extends Record<string, unknown> = Record<string, unknown>,
  TResult = unknown,
  TTape = TapeHandle,
  TContext extends ToolContext<TTape> | ToolRunOptions = ToolContext<TTape> | ToolRunOptions,
> {
  /** Runtime name; may contain dots (`fs.read`). The model sees `fs_read`. */
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodType<TArgs, Record<string, unknown>>;
  /** Whether `run` needs a {@link ToolContext}. */
  readonly context: boolean;
  /** Whether the model may call it (false: comma command only). */
  readonly agentUse: boolean;
  /** JSON schema of the arguments object, computed once on first use. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  run(args: TArgs, context: TContext): TResult | Promise<TResult>;
}

/** What {@link defineTool} takes. */
export interface ToolDefinition<P extends ToolParameters, C extends boolean, TResult, TTape> {
  /** Runtime name, e.g. `fs.read`. */
  name: string;
  description?: string;
  /**
   * A zod object schema of the arguments, or a function returning one, called when the
   * schema is first needed (validating a call, or converting it for the model without an
   * `inputSchema`): building zod schemas is a noticeable part of a cold start when a process
   * defines many tools and calls few. Omitted: no arguments.
   */
  parameters?: P | (() => P);
  /** `true`: `run` receives a {@link ToolContext} (tape, run id, state). */
  context?: C;
  /** `false`: hidden from the model, still usable as a comma command. Default `true`. */
  agentUse?: boolean;
  /**
   * The JSON schema of `parameters`, when it was generated ahead of time (see
   * `npm run gen:tool-schemas` for the builtin tools); it must be exactly what
   * {@link toolInputSchema} returns. Omitted: computed on first use.
   */
  inputSchema?: Readonly<Record<string, unknown>>;
  run(args: z.output<P>, context: ToolRunContext<C, TTape>): TResult | Promise<TResult>;
}

/** Drops the safe-integer bounds zod adds to every `.int()`: noise in every prompt. */
function dropIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropIntegerBounds(item);
    return;
  }
  if (!isRecord(node)) return;
  if (node.type === "integer") {
    if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
    if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
  }
  for (const value of Object.values(node)) dropIntegerBounds(value);
}

/** JSON schema (draft-07) of a zod object schema, as models expect it. */
export function toolInputSchema(parameters: z.ZodType): Record<string, unknown> {
  const schema: Record<string, unknown> = z.toJSONSchema(parameters, { target: "draft-07", io: "input", unrepresentable: "any" });
  delete schema.$schema;
  dropIntegerBounds(schema);
  if (schema.type === undefined) schema.type = "object";
  if (schema.properties === undefined) schema.properties = {};
  return schema;
}

/**
 * Defines a tool with full type inference: `args` is the schema's output type and `ctx` is a
 * {@link ToolContext} exactly when `context: true`.
 *
 * ```ts
 * const read = defineTool({
 *   name: "fs.read",
 *   description: "Read a text file",
 *   parameters: z.object({ path: z.string(), limit: z.number().int().optional() }),
 *   context: true,
 *   run: async ({ path, limit }, { turn }) => readText(path, limit, turn?.workspace),
 * });
 * ```
 */
export function defineTool<
  S extends z.core.$ZodLooseShape = {},
  Cfg extends z.core.$ZodObjectConfig = z.core.$strip,
  C extends boolean = false,
  TResult = unknown,
  TTape = TapeHandle,
>(
  definition: ToolDefinition<z.ZodObject<S, Cfg>, C, TResult, TTape>,
): Tool<z.output<z.ZodObject<S, Cfg>>, TResult, TTape, ToolRunContext<C, TTape>> {
  const name = definition.name.trim();
  if (!name) throw new TypeError("defineTool: a tool needs a non-empty name");
  const declared = definition.parameters;
  let parameters: z.ZodObject<S, Cfg> | undefined;
  let schema = definition.inputSchema;
  const run = definition.run;
  const tool: Tool<z.output<z.ZodObject<S, Cfg>>, TResult, TTape, ToolRunContext<C, TTape>> = {
    name,
    description: definition.description ?? "",
    get parameters() {
      // Without `parameters`, `S` and `Cfg` are their defaults (`{}`, `$strip`): the very
      // types of `z.object({})`; TypeScript cannot tie an omitted property to a default.
      return (parameters ??= typeof declared === "function" ? declared() : (declared ?? (z.object({}) as z.ZodObject<S, Cfg>)));
    },
    context: definition.context === true,
    agentUse: definition.agentUse !== false,
    get inputSchema() {
      return (schema ??= Object.freeze(toolInputSchema(this.parameters)));
    },
    run(args, context) {
      return run(args, context);
    },
  };
  return Object.freeze(tool);
}

/** `fs.read` → `fs_read`: the name the model sees. */
export function toModelToolName(name: string): string {
  return name.replaceAll(".", "_");
}

/** The copies {@link renameTool} made, by tool: a tool is renamed for the model on every step. */
const renamedCopies = new WeakMap<Tool, Tool>();

/** A copy of a tool under another name (its schema and behaviour unchanged); the same copy each time for one tool and name. */
export function renameTool(tool: Tool, name: string): Tool {
  if (tool.name === name) return tool;
  const known = renamedCopies.get(tool);
  if (known?.name === name) return known;
  const copy = makeRenamed(tool, name);
  renamedCopies.set(tool, copy);
  return copy;
}

function makeRenamed(tool: Tool, name: string): Tool {
  const copy: Tool = {
    name,
    description: tool.description,
    get parameters() {
      return tool.parameters;
    },
    context: tool.context,
    agentUse: tool.agentUse,
    get inputSchema() {
      return tool.inputSchema;
    },
    run: tool.run.bind(tool),
  };
  return Object.freeze(copy);
}

/** Agent-usable tools renamed to their model-facing aliases (`fs.read` → `fs_read`). */
export function toModelTools(tools: Iterable<Tool>): Tool[] {
  const result: Tool[] = [];
  for (const tool of tools) if (tool.agentUse) result.push(renameTool(tool, toModelToolName(tool.name)));
  return result;
}

/** The OpenAI function-tool schema of a tool. */
export function toolSchema(tool: Tool): { type: "function"; function: { name: string; description: string; parameters: Record<string, unknown> } } {
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: { ...tool.inputSchema } } };
}

function signature(tool: Tool): string {
  const schema = tool.inputSchema;
  const properties = schema.properties;
  const name = toModelToolName(tool.name);
  if (typeof properties !== "object" || properties === null || Object.keys(properties).length === 0) return `${name}()`;
  const listed: unknown = schema.required;
  const required = new Set(Array.isArray(listed) ? listed.filter((item: unknown) => typeof item === "string") : []);
  const params = Object.keys(properties).map((key) => (required.has(key) ? key : `${key}?`));
  return `${name}(${params.join(", ")})`;
}

/**
 * The `<available_tools>` block of the system prompt: one line per agent-usable tool,
 * `- name(required, optional?): description`; `""` when there are none.
 */
export function renderToolsPrompt(tools: Iterable<Tool>): string {
  const lines: string[] = [];
  for (const tool of tools) {
    if (!tool.agentUse) continue;
    lines.push(tool.description ? `- ${signature(tool)}: ${tool.description}` : `- ${signature(tool)}`);
  }
  return lines.length === 0 ? "" : `<available_tools>\n${lines.join("\n")}\n</available_tools>`;
}
