/**
 * The tool registry: runtime names (`fs.read`), their model-facing aliases (`fs_read`), and
 * name resolution for `allowed_tools` lists and comma commands.
 */
import { BubError } from "../kernel/errors.ts";
import { renderToolsPrompt, toModelToolName, toModelTools, type Tool } from "./tool.ts";

/** Holds the tools of one runtime. */
export interface ToolRegistry {
  /**
   * Adds a tool; a later tool with the same name replaces the earlier one (in place).
   * Returns a function that removes it again (if it was not replaced since).
   */
  register(tool: Tool): () => void;
  /** The tool with this exact runtime name. */
  get(name: string): Tool | undefined;
  has(name: string): boolean;
  /** Every tool in registration order. */
  list(): Tool[];
  /** Every runtime name in registration order. */
  names(): string[];
  /**
   * The runtime name for a user- or model-given name: trimmed, case-insensitive, either the
   * runtime name or its `_` alias (runtime names win). Null when unknown or blank.
   */
  resolveToolName(name: string): string | null;
  /**
   * Resolves a list of names (null: every tool) minus `exclude`.
   *
   * @throws BubError `invalid_input` `unknown tool name(s): 'a', 'b'` when any name in
   *   either list is unknown.
   */
  resolveToolNames(names: Iterable<string> | null, exclude?: Iterable<string>): Set<string>;
  /** Tools whose runtime names are given (all when null), in registration order. */
  select(names: Iterable<string> | null): Tool[];
  /** Agent-usable tools under their model-facing names (all, or those named). */
  modelTools(names?: Iterable<string> | null): Tool[];
  /** The `<available_tools>` prompt block for the agent-usable tools (all, or those named). */
  renderPrompt(names?: Iterable<string> | null): string;
}

/** Python `repr()` of a string, as used by the reference's error messages. */
function pyRepr(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let body = value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll("\r", "\\r").replaceAll("\t", "\\t");
  if (quote === "'") body = body.replaceAll("'", "\\'");
  return `${quote}${body}${quote}`;
}

/** The error for unknown tool names, sorted and repr-quoted like the reference's ValueError. */
export function unknownToolNamesError(names: Iterable<string>): BubError {
  const formatted = [...new Set(names)].map(pyRepr).sort();
  return new BubError("invalid_input", `unknown tool name(s): ${formatted.join(", ")}`, { details: { names: [...new Set(names)] } });
}

class DefaultToolRegistry implements ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  /** casefolded runtime name or alias → runtime name (rebuilt lazily). */
  #index: Map<string, string> | null = null;
  /** The prompt block of every tool (rebuilt lazily: it is asked for on every model step). */
  #prompt: string | null = null;

  register(tool: Tool): () => void {
    this.#tools.set(tool.name, tool);
    this.#changed();
    return () => {
      if (this.#tools.get(tool.name) === tool) {
        this.#tools.delete(tool.name);
        this.#changed();
      }
    };
  }

  #changed(): void {
    this.#index = null;
    this.#prompt = null;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  list(): Tool[] {
    return [...this.#tools.values()];
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  #nameIndex(): Map<string, string> {
    if (this.#index) return this.#index;
    const index = new Map<string, string>();
    for (const name of this.#tools.keys()) index.set(toModelToolName(name).toLowerCase(), name);
    for (const name of this.#tools.keys()) index.set(name.toLowerCase(), name);
    return (this.#index = index);
  }

  resolveToolName(name: string): string | null {
    const key = name.trim().toLowerCase();
    if (!key) return null;
    return this.#nameIndex().get(key) ?? null;
  }

  #resolveAll(names: Iterable<string>): { resolved: Set<string>; unknown: string[] } {
    const resolved = new Set<string>();
    const unknown: string[] = [];
    for (const name of names) {
      const found = this.resolveToolName(name);
      if (found) resolved.add(found);
      else unknown.push(name.trim());
    }
    return { resolved, unknown };
  }

  resolveToolNames(names: Iterable<string> | null, exclude: Iterable<string> = []): Set<string> {
    const excluded = this.#resolveAll(exclude);
    if (excluded.unknown.length > 0) throw unknownToolNamesError(excluded.unknown);
    if (names === null) return new Set(this.names().filter((name) => !excluded.resolved.has(name)));
    const wanted = this.#resolveAll(names);
    if (wanted.unknown.length > 0) throw unknownToolNamesError(wanted.unknown);
    for (const name of excluded.resolved) wanted.resolved.delete(name);
    return wanted.resolved;
  }

  select(names: Iterable<string> | null): Tool[] {
    if (names === null) return this.list();
    const wanted = new Set(names);
    return this.list().filter((tool) => wanted.has(tool.name));
  }

  modelTools(names: Iterable<string> | null = null): Tool[] {
    return toModelTools(this.select(names));
  }

  renderPrompt(names: Iterable<string> | null = null): string {
    if (names !== null) return renderToolsPrompt(this.select(names));
    return (this.#prompt ??= renderToolsPrompt(this.list()));
  }
}

/**
 * A new, empty {@link ToolRegistry}.
 *
 * ```ts
 * const registry = createToolRegistry();
 * registry.register(readTool);
 * registry.resolveToolName("FS_READ"); // "fs.read"
 * ```
 */
export function createToolRegistry(tools: Iterable<Tool> = []): ToolRegistry {
  const registry = new DefaultToolRegistry();
  for (const tool of tools) registry.register(tool);
  return registry;
}
