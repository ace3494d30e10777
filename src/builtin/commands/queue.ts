/**
 * `bub queue list | retry`: the shared inbound queue of gateways on PostgreSQL
 * (`BUB_DATABASE_URL`; docs/cli.md, docs/deploy.md). The work is in ./queue-admin.ts, loaded
 * when a subcommand runs (with pg-boss).
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/** Adds `bub queue` and its subcommands to the program. */
export function registerQueueCommand(app: Command, framework: BubFramework): void {
  const queue = app.command("queue").description("the shared inbound queue of gateways on PostgreSQL: counts, dead letters, retry");
  queue
    .command("list")
    .description("messages waiting and running per bot, and the dead letters (messages that failed twice)")
    .option("--json", "print a JSON object instead of tables")
    .addHelpText(
      "after",
      `
Reads the database of BUB_DATABASE_URL.

Examples:
  $ bub queue list
  $ bub queue list --json | jq -r '.dead_letters[].id'`,
    )
    .action(async (options: { json?: boolean }) => {
      const { runQueueList } = await import("./queue-admin.ts");
      await runQueueList(framework, options, process.stdout);
    });
  queue
    .command("retry")
    .description("send dead letters back to their queue, to be run again (as new messages of their session)")
    .argument("[ids...]", "dead-letter ids, as `bub queue list` shows them")
    .option("--all", "every dead letter")
    .addHelpText(
      "after",
      `
Examples:
  $ bub queue retry 3f2a0c1e-0000-4000-8000-000000000001
  $ bub queue retry --all`,
    )
    .action(async (ids: string[], options: { all?: boolean }, command: Command) => {
      if (options.all === true && ids.length > 0) command.error("error: bub queue retry takes ids or --all, not both", { exitCode: 2, code: "commander.invalidArgument" });
      if (options.all !== true && ids.length === 0) command.error("error: bub queue retry needs dead-letter ids (see bub queue list) or --all", { exitCode: 2, code: "commander.invalidArgument" });
      const { runQueueRetry } = await import("./queue-admin.ts");
      await runQueueRetry(framework, ids, options, process.stdout);
    });
}
