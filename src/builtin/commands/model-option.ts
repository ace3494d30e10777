/** The `--model provider:model` option of `bub run` and `bub chat`. */
import { InvalidArgumentError } from "commander";

/**
 * Checks the shape of a `--model` value (commander calls it while parsing, so a malformed id
 * is a usage error). Whether the provider is known and has a key is checked by the turn.
 */
export function modelOption(value: string): string {
  const id = value.trim();
  if (!/^[^:/\s]+[:/]\S/.test(id)) throw new InvalidArgumentError(`expected provider:model, e.g. openai:gpt-4o-mini (got '${value}')`);
  return id;
}
