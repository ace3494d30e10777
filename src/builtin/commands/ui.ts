/**
 * `bub ui`: the local web view of the configured tape store (sessions, timelines, search,
 * live updates) on 127.0.0.1, until stopped.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import { BubError } from "../../kernel/errors.ts";

/** Options of `bub ui`. */
export interface UiCommandOptions {
  /** The port on 127.0.0.1 (0: any free port). */
  port?: number;
}

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError(`expected a port number from 0 to 65535 (got '${value}')`);
  return Number(value);
}

/** The port `bub ui` uses without `--port`. */
export const DEFAULT_UI_PORT = 8787;

/**
 * Serves the web view over the store `provideTapeStore` gives (files, SQLite or a plugin's)
 * until `signal` aborts; prints the URL, token included, on `out`. Returns the exit code.
 *
 * @throws BubError when the port is taken or the store cannot be opened.
 */
export async function runUi(framework: BubFramework, options: UiCommandOptions, out: { write(text: string): unknown }, signal: AbortSignal): Promise<number> {
  await framework.settings.prepare();
  const [{ startUiServer }, { rememberSettingsSecrets }, { redactSecrets }, { contextSettings, costSettings }] = await Promise.all([
    import("../../ui/server.ts"),
    import("../../config/secrets.ts"),
    import("../../config/redaction.ts"),
    import("../../cost/settings.ts"),
  ]);
  // The context line reads cost.models and context.budget_share; a section that does not load leaves the catalog's windows.
  await Promise.allSettled([framework.settings.load(costSettings), framework.settings.load(contextSettings)]);
  rememberSettingsSecrets(framework.settings);
  return framework.running(async (scope) => {
    if (!scope.tapeStore) throw new BubError("config", "No plugin provides a tape store (provideTapeStore): check the plugins with bub hooks.");
    const { listDeliveries } = await import("./delivery-admin.ts");
    const deliveries = () => listDeliveries(framework);
    const server = await startUiServer({ store: scope.tapeStore, port: options.port ?? DEFAULT_UI_PORT, redact: (text) => redactSecrets(text), deliveries, config: (path) => framework.settings.getValue(path, undefined) });
    try {
      out.write(`bub ui: ${server.url}\n(open it in a browser on this machine; Ctrl-C to stop)\n`);
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    } finally {
      await server.close();
    }
    return 0;
  });
}

/** Adds `bub ui` to the program. */
export function registerUiCommand(app: Command, framework: BubFramework): void {
  app
    .command("ui")
    .description("browse the session tapes in a local web page (sessions, timelines, search, live updates)")
    .option("--port <port>", `port on 127.0.0.1 (default ${DEFAULT_UI_PORT}; 0 picks a free one)`, parsePort)
    .addHelpText(
      "after",
      `
The page is served on 127.0.0.1 only. The printed URL carries a random access token made
at start; requests without it are refused. It reads the configured tape store (BUB_TAPE_STORE)
and shows new turns as a gateway or chat writes them.

Examples:
  $ bub ui
  $ bub ui --port 0`,
    )
    .action(async (options: UiCommandOptions) => {
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      try {
        const code = await runUi(framework, options, process.stdout, stop.signal);
        if (code !== 0) process.exitCode = code;
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
}
