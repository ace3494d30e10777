/** `bub cost`: model-call spending read back from every tape (docs/cost.md). The work is in ./cost-report.ts. */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/** Adds `bub cost` to the program. */
export function registerCostCommand(app: Command, framework: BubFramework): void {
  app
    .command("cost")
    .description("what the recorded model calls cost: totals by day, session, model, user or turn")
    .option("--session <session>", "only this session (a session id as in `bub tape list`, or a tape name)")
    .option("--since <date>", "only calls from this date on: an ISO date (2026-12-01) or a number of days (7d)")
    .option("--by <group>", "day, session (or chat), model, user or turn", "day")
    .option("--json", "print the report as JSON")
    .addHelpText(
      "after",
      `
Prices are recorded on each call's run event when it is made: from cost.models in
config.yml, else the provider's own figure, else the @pydantic/genai-prices catalog. A call
without a known price counts in tokens, not in dollars ("—", or "+" after a partial sum).

Examples:
  $ bub cost
  $ bub cost --by model --since 7d
  $ bub cost --session telegram:123456 --by turn
  $ bub cost --by user --json | jq '.groups[] | {key, usd}'`,
    )
    .action(async (options: { session?: string; since?: string; by?: string; json?: boolean }) => {
      const { runCostReport } = await import("./cost-report.ts");
      await runCostReport(framework, options, process.stdout);
    });
}
