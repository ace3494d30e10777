/**
 * `bub delivery list | retry | purge`: the outbound delivery ledger's dead letters (replies
 * the gateway gave up on) and possibly repeated sends (docs/cli.md, docs/channels.md). The
 * work is in ./delivery-admin.ts, loaded when a subcommand runs.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/** `ids` or `--all`, not both, not neither. */
function checkSelection(command: Command, name: string, ids: readonly string[], all: boolean | undefined): void {
  if (all === true && ids.length > 0) command.error(`error: bub delivery ${name} takes ids or --all, not both`, { exitCode: 2, code: "commander.invalidArgument" });
  if (all !== true && ids.length === 0) command.error(`error: bub delivery ${name} needs ids (see bub delivery list) or --all`, { exitCode: 2, code: "commander.invalidArgument" });
}

/** Adds `bub delivery` and its subcommands to the program. */
export function registerDeliveryCommand(app: Command, framework: BubFramework): void {
  const delivery = app.command("delivery").description("the outbound delivery ledger: replies given up on (dead letters), retry, purge");
  delivery
    .command("list")
    .description("dead letters, replies possibly sent twice, and how many replies wait to be sent")
    .option("--json", "print a JSON object instead of tables")
    .addHelpText(
      "after",
      `
Reads <BUB_HOME>/delivery.sqlite3, or the database of BUB_DATABASE_URL when it is set.

Examples:
  $ bub delivery list
  $ bub delivery list --json | jq -r '.dead_letters[].id'`,
    )
    .action(async (options: { json?: boolean }) => {
      const { runDeliveryList } = await import("./delivery-admin.ts");
      await runDeliveryList(framework, options, process.stdout);
    });
  delivery
    .command("retry")
    .description("send dead letters again (a running gateway takes them within seconds; else the next one that starts)")
    .argument("[ids...]", "dead-letter ids, as `bub delivery list` shows them")
    .option("--all", "every dead letter")
    .addHelpText("after", "\nExamples:\n  $ bub delivery retry 12 13\n  $ bub delivery retry --all")
    .action(async (ids: string[], options: { all?: boolean }, command: Command) => {
      checkSelection(command, "retry", ids, options.all);
      const { runDeliveryChange } = await import("./delivery-admin.ts");
      await runDeliveryChange(framework, "retry", ids, options, process.stdout);
    });
  delivery
    .command("purge")
    .description("forget dead letters and possibly repeated sends for good")
    .argument("[ids...]", "ids, as `bub delivery list` shows them")
    .option("--all", "every dead letter and possibly repeated send")
    .addHelpText("after", "\nExamples:\n  $ bub delivery purge 12\n  $ bub delivery purge --all")
    .action(async (ids: string[], options: { all?: boolean }, command: Command) => {
      checkSelection(command, "purge", ids, options.all);
      const { runDeliveryChange } = await import("./delivery-admin.ts");
      await runDeliveryChange(framework, "purge", ids, options, process.stdout);
    });
}
