/**
 * A builtin tool with its JSON schema taken from input-schemas.generated.ts: converting some
 * twenty zod schemas on every start would cost a one-shot `bub run` about 10 ms. A test keeps
 * the file in step with the zod schemas (`npm run gen:tool-schemas` rewrites it).
 */
import type { Tool } from "../tool.ts";
import { BUILTIN_INPUT_SCHEMAS } from "./input-schemas.generated.ts";

/** `tool` with its pre-generated input schema (the tool itself when none was generated). */
export function withGeneratedSchema(tool: Tool): Tool {
  const inputSchema = BUILTIN_INPUT_SCHEMAS[tool.name];
  if (!inputSchema) return tool;
  // The zod schema stays lazy: reading it here would build it on every start.
  const generated: Tool = {
    name: tool.name,
    description: tool.description,
    get parameters() {
      return tool.parameters;
    },
    context: tool.context,
    agentUse: tool.agentUse,
    inputSchema,
    run: (args, options) => tool.run(args, options),
  };
  return Object.freeze(generated);
}
