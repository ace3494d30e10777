/**
 * `bub tape list | show | export`: the session tapes of the configured store, by session id
 * (docs/cli.md). The work is in ./tape-list.ts and ./tape-show.ts, loaded when a subcommand runs.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/** `--since-anchor` alone means the last anchor of any name. */
function sinceAnchorOf(value: string | boolean | undefined): string | true | undefined {
  return value === undefined || value === false ? undefined : value === true ? true : value;
}

/** Adds `bub tape` and its subcommands to the program. */
export function registerTapeCommand(app: Command, framework: BubFramework): void {
  const tape = app.command("tape").description("list the session tapes, show one as a transcript, export one");
  tape
    .command("list")
    .description("one row per session: workspace, session id, entries, turns, last activity, size")
    .option("--json", "print a JSON array instead of a table")
    .addHelpText(
      "after",
      `
Newest activity first. A tape written before the name index existed has no session id in
the list; its tape name works wherever a session id does.

Examples:
  $ bub tape list
  $ bub tape list --json | jq -r '.[] | select(.turns > 10) | .session_id'`,
    )
    .action(async (options: { json?: boolean }) => {
      const { runTapeList } = await import("./tape-list.ts");
      await runTapeList(framework, options, process.stdout);
    });
  tape
    .command("show")
    .description("print a session's tape as a transcript: anchors, messages, tool calls and results, usage per turn")
    .argument("<session>", "a session id (as in `bub tape list`) or a tape name")
    .option("--since-anchor [name]", "only what follows the last anchor (of this name, when given)")
    .option("--json", "print the transcript as JSON")
    .option("--full", "do not shorten long messages and tool output")
    .addHelpText(
      "after",
      `
A session id used in several workspaces means the current workspace's (-w to pick another).

Examples:
  $ bub tape show cli:local
  $ bub tape show telegram:123456 --since-anchor
  $ bub tape show cli:local --json | jq '.turns[] | {number, usage}'
  $ bub -w ~/project tape show cli:local`,
    )
    .action(async (session: string, options: { sinceAnchor?: string | boolean; json?: boolean; full?: boolean }) => {
      const { runTapeShow } = await import("./tape-show.ts");
      await runTapeShow(framework, session, { sinceAnchor: sinceAnchorOf(options.sinceAnchor), json: options.json === true, full: options.full === true }, process.stdout);
    });
  tape
    .command("export")
    .description("write a session's tape to stdout: its entries as JSON lines, a Markdown transcript, an ATIF trajectory or CloudEvents")
    .argument("<session>", "a session id (as in `bub tape list`) or a tape name")
    .option("--format <format>", "jsonl (the tape's own lines), markdown, atif (Harbor's trajectory format, one JSON document) or cloudevents (one event per ATIF step, JSON lines)", "jsonl")
    .addHelpText(
      "after",
      `
Examples:
  $ bub tape export cli:local > cli-local.jsonl
  $ bub tape export telegram:123456 --format markdown > chat.md
  $ bub tape export cli:local --format atif > trajectory.json
  $ bub tape export cli:local --format cloudevents | jq -c '.data.source'`,
    )
    .action(async (session: string, options: { format: string }) => {
      const { runTapeExport } = await import("./tape-show.ts");
      await runTapeExport(framework, session, options, process.stdout);
    });
}
