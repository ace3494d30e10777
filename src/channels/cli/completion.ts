/** Tool and command names in the REPL: Tab completion after `,`, and tool names as the person knows them. */

/** The REPL's own commands, offered by completion along with the tools. */
const REPL_COMMANDS = ["help", "thinking", "quit", "exit"];

/**
 * Readline completion for `line`: every `,<name>` it starts, over the tool names and the
 * REPL's commands, sorted by section (the part up to the last `.`), then by name. Only a
 * line starting with `,` is completed.
 *
 * ```ts
 * completeCommand(",fs.r", ["fs.read", "fs.write", "bash"]); // [[",fs.read"], ",fs.r"]
 * ```
 */
export function completeCommand(line: string, toolNames: Iterable<string>): [string[], string] {
  if (!line.startsWith(",")) return [[], line];
  const names = [...new Set([...toolNames, ...REPL_COMMANDS])];
  const candidates = names.map((name) => `,${name}`).sort((a, b) => {
    const [sectionA, nameA] = [a.slice(0, a.lastIndexOf(".") + 1), a];
    const [sectionB, nameB] = [b.slice(0, b.lastIndexOf(".") + 1), b];
    return sectionA === sectionB ? nameA.localeCompare(nameB) : sectionA.localeCompare(sectionB);
  });
  const hits = candidates.filter((candidate) => candidate.startsWith(line));
  return [hits, line];
}

/** A model-facing tool name (`fs_read`) as its runtime name (`fs.read`) when one of `toolNames` is it. */
export function displayToolName(name: string, toolNames: Iterable<string>): string {
  const names = [...toolNames];
  if (names.includes(name)) return name;
  return names.find((candidate) => candidate.replaceAll(".", "_") === name) ?? name;
}
