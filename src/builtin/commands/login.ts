/**
 * `bub login openai` (sign in with a ChatGPT subscription), `bub login status` and
 * `bub logout openai`. The work is in src/login/, imported when a command runs.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { CodexSettings } from "../../llm/codex/settings.ts";

/** Options of `bub login openai`. */
interface LoginOptions {
  codexHome?: string;
  browser?: boolean;
  manual?: boolean;
  timeout: number;
}

function seconds(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError("expected a number of seconds above 0.");
  return parsed;
}

/** The `codex` settings, with `--codex-home` over the `home` setting. */
async function codexSettingsFor(framework: BubFramework, codexHome: string | undefined): Promise<CodexSettings> {
  const { codexSettings, withCodexDefaults } = await import("../../llm/codex/settings.ts");
  const settings = withCodexDefaults(await framework.settings.load(codexSettings));
  return codexHome ? { ...settings, home: codexHome } : settings;
}

/** Adds `bub login` to the program. */
export function registerLoginCommand(app: Command, framework: BubFramework): void {
  const login = app.command("login").description("sign in to a model provider (openai: with a ChatGPT subscription)");
  login
    .command("openai")
    .description("sign in with your ChatGPT account (OpenAI Codex OAuth); openai: models then need no API key")
    .option("--codex-home <dir>", "folder of auth.json (default: $CODEX_HOME, else ~/.codex)")
    .option("--browser", "open a browser and wait for it on the local callback (default)")
    .option("--no-browser", "print the URL and read the callback URL or the code from stdin")
    .option("--manual", "same as --no-browser")
    .option("--timeout <seconds>", "how long to wait for the sign-in", seconds, 300)
    .addHelpText(
      "after",
      `
The tokens are stored in <codex home>/auth.json (readable by you only) and refreshed
when they are about to expire. Then, with no BUB_API_KEY and no BUB_OPENAI_API_BASE:

  $ BUB_MODEL=openai:gpt-5.1-codex bub run "hello"

Examples:
  $ bub login openai
  $ bub login openai --manual          # on a machine without a browser
  $ bub login status
  $ bub logout openai`,
    )
    .action(async (options: LoginOptions) => {
      const [{ runLogin }, settings] = await Promise.all([import("../../login/commands.ts"), codexSettingsFor(framework, options.codexHome)]);
      const code = await runLogin({
        settings,
        env: process.env,
        manual: options.manual === true,
        browser: options.browser !== false,
        timeoutSeconds: options.timeout,
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
      });
      if (code !== 0) process.exitCode = code;
    });
  login
    .command("status")
    .description("show whether a ChatGPT sign-in is stored (exit 1 when not)")
    .option("--codex-home <dir>", "folder of auth.json (default: $CODEX_HOME, else ~/.codex)")
    .action(async (options: { codexHome?: string }) => {
      const [{ printLoginStatus }, settings] = await Promise.all([import("../../login/commands.ts"), codexSettingsFor(framework, options.codexHome)]);
      const code = await printLoginStatus(settings, process.env, process.stdout);
      if (code !== 0) process.exitCode = code;
    });
}

/** Adds `bub logout` to the program. */
export function registerLogoutCommand(app: Command, framework: BubFramework): void {
  app
    .command("logout")
    .description("forget a provider sign-in (openai)")
    .command("openai")
    .description("remove the ChatGPT tokens from auth.json (its other keys stay)")
    .option("--codex-home <dir>", "folder of auth.json (default: $CODEX_HOME, else ~/.codex)")
    .action(async (options: { codexHome?: string }) => {
      const [{ runLogout }, settings] = await Promise.all([import("../../login/commands.ts"), codexSettingsFor(framework, options.codexHome)]);
      await runLogout(settings, process.env, process.stdout);
    });
}
