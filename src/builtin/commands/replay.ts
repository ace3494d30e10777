/**
 * `bub replay <session>`: the session's turns again, against another model or plugin set,
 * compared with the original turn by turn (docs/cli.md). The work is in ./replay-run.ts,
 * loaded when the command runs.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import { escapeControlChars } from "../../kernel/terminal-text.ts";
import { modelOption } from "./model-option.ts";
import { INTERRUPT_EXIT_CODES, withInterruptSignals } from "../../agent/interrupt.ts";

/** Adds `bub replay` to the program. */
export function registerReplayCommand(app: Command, framework: BubFramework): void {
  app
    .command("replay")
    .description("re-run a session's turns against another model or plugin set and compare the answers, tool calls, tokens, cost and latency")
    .argument("<session>", "a session id (as in `bub tape list`) or a tape name")
    .option("--model <provider:model>", "the model of the replay (default: the configured model)", modelOption)
    .option("--plugins <list>", "plugins of the replay in place of BUB_PLUGINS: comma separated paths or packages ('' for none); plugins: of config.yml still load")
    .option("--live", "let bash and web.fetch run when no recorded call matches (they are refused otherwise)")
    .option("--keep", "keep the scratch copy of the workspace the replay's tools ran in (its path is printed)")
    .option("--json", "print the comparison as JSON")
    .addHelpText(
      "after",
      `
The replay runs under a new session, <session>/replay-<UTC time>, listed by \`bub tape list\`
and \`bub ui\` next to the original, whose tape is only read. Its tools work in a scratch copy
of the workspace. A tool call with the same name and arguments as a recorded one gets the
recorded result instead of running.

Examples:
  $ bub replay cli:local --model openai:gpt-4o-mini
  $ bub replay telegram:123456 --plugins ./my-plugin.ts --live
  $ bub replay cli:local --model anthropic:claude-sonnet-4-5 --json | jq '.totals'`,
    )
    .action(async (session: string, options: { model?: string; plugins?: string; live?: boolean; keep?: boolean; json?: boolean }) => {
      const { runReplay } = await import("./replay-run.ts");
      // Answers and tool output come from models: on a terminal their control characters are shown, not obeyed.
      const out = process.stdout.isTTY ? { write: (text: string) => process.stdout.write(escapeControlChars(text)) } : process.stdout;
      // Ctrl-C or SIGTERM stops the running turn as in `bub run`; the turns that ran are still compared, the scratch copy removed.
      const { interrupted: which } = await withInterruptSignals((signal) => runReplay(framework, session, options, out, signal));
      if (which) {
        process.stderr.write(`bub: interrupted (${which}) — the replay stopped; the turns that ran are compared above and kept on its tape\n`);
        process.exitCode = INTERRUPT_EXIT_CODES[which];
      }
    });
}
