/**
 * `bub onboard`: a wizard for `<BUB_HOME>/config.yml`. It asks for the model, key and base
 * URL (and checks them with one short request), the channels with the Telegram bot's token
 * and allowlist, and streaming; adds every plugin's `onboardConfig` fragment, validates the
 * result and merges it into the existing file (keys it did not ask about are kept), then
 * prints the commands that start bub. Cancelling any question writes nothing. Options answer
 * questions ahead (see onboard-flags.ts); with `--yes` nothing is asked at all. The
 * questions are in onboard-wizard.ts; on a stdin that is not a terminal they are read as
 * lines (onboard-lines.ts).
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { OnboardAnswers } from "./onboard-flags.ts";
import { isRecord } from "../../kernel/guards.ts";
import { mergeConfig } from "../../config/settings.ts";

/** One choice of a select or multiselect question. */
export interface PromptOption {
  value: string;
  label?: string;
  hint?: string;
}

/**
 * The questions the wizard asks, shaped like @clack/prompts (the default). Each returns the
 * answer or a cancel marker recognised by {@link OnboardPrompts.isCancel}.
 */
export interface OnboardPrompts {
  intro(title: string): void;
  outro(message: string): void;
  cancel(message: string): void;
  select(options: { message: string; options: PromptOption[]; initialValue?: string }): Promise<string | symbol>;
  text(options: { message: string; placeholder?: string; initialValue?: string; defaultValue?: string }): Promise<string | symbol>;
  password(options: { message: string }): Promise<string | symbol>;
  multiselect(options: { message: string; options: PromptOption[]; initialValues?: string[]; required?: boolean }): Promise<string[] | symbol>;
  confirm(options: { message: string; initialValue?: boolean }): Promise<boolean | symbol>;
  isCancel(value: unknown): value is symbol;
  /** Progress lines between questions (the model check); none: not shown. */
  log?: { info(message: string): void; success(message: string): void; error(message: string): void };
}

/** The terminal prompts of @clack/prompts, imported only when the wizard asks. */
async function clackPrompts(): Promise<OnboardPrompts> {
  const clack = await import("@clack/prompts");
  return {
    intro: (title) => clack.intro(title),
    outro: (message) => clack.outro(message),
    cancel: (message) => clack.cancel(message),
    select: (options) => clack.select(options),
    text: (options) => clack.text(options),
    password: (options) => clack.password(options),
    multiselect: (options) => clack.multiselect(options),
    confirm: (options) => clack.confirm(options),
    isCancel: (value) => clack.isCancel(value),
    log: clack.log,
  };
}

/** Where the wizard writes its banner and result lines. */
export interface OnboardIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

const DEFAULT_MODEL = "openrouter:openrouter/free";

/** `provider:model` split at the first `:`; anything else counts as an OpenRouter model. */
export function splitModel(model: string): { provider: string; name: string } {
  const index = model.indexOf(":");
  if (index > 0 && index < model.length - 1) return { provider: model.slice(0, index), name: model.slice(index + 1) };
  return { provider: "openrouter", name: model.trim() || "openrouter/free" };
}

const BANNER = String.raw`
 ____        _
| __ ) _   _| |__
|  _ \| | | | '_ \
| |_) | |_| | |_) |
|____/ \__,_|_.__/
`;

/** The configured model, split; the default one when none is set. */
function currentModel(existing: Record<string, unknown>): { provider: string; name: string } {
  return splitModel(typeof existing.model === "string" && existing.model !== "" ? existing.model : DEFAULT_MODEL);
}

/**
 * The builtin fragment without questions: the model from the options (required unless
 * config.yml already names one and `--provider` is not given).
 */
async function builtinFromAnswers(existing: Record<string, unknown>, given: OnboardAnswers): Promise<Record<string, unknown>> {
  const { modelFromAnswers, OnboardUsageError } = await import("./onboard-flags.ts");
  const { provider, name } = modelFromAnswers(given);
  if (name !== undefined) return { model: `${provider ?? currentModel(existing).provider}:${name}` };
  if (provider !== undefined) throw new OnboardUsageError("--provider needs --model too (the model name within that provider)");
  if (typeof existing.model === "string" && existing.model !== "") return {};
  throw new OnboardUsageError("--model is required when config.yml names no model yet (e.g. --model openai:gpt-4o-mini)");
}

/** Options of {@link runOnboard}. */
export interface OnboardOptions {
  prompts?: OnboardPrompts;
  io?: OnboardIO;
  version?: string;
  /** Answers given ahead (command-line options); their questions are not asked. */
  answers?: OnboardAnswers;
  /** False: ask nothing, use {@link answers} and keep the rest of the file. Default true. */
  interactive?: boolean;
  /**
   * Check the model with one short request before saving. Default: when asking. Asking, a
   * failure lets the person answer again or save anyway; without questions it writes
   * nothing and returns 1.
   */
  check?: boolean;
}

/**
 * Runs the wizard and writes the config file. Returns the exit code: 0 saved, 1 cancelled
 * or failed, 2 options that contradict each other or miss a required answer (nothing
 * written in either case).
 */
export async function runOnboard(framework: BubFramework, options: OnboardOptions = {}): Promise<number> {
  const io = options.io ?? { stdout: process.stdout, stderr: process.stderr };
  const given = options.answers ?? {};
  const interactive = options.interactive ?? true;
  const [{ readConfigFile, writeConfigFile }, flags] = await Promise.all([import("../../config/config-file.ts"), import("./onboard-flags.ts")]);
  try {
    flags.checkAnswers(given);
  } catch (error) {
    io.stderr.write(`bub: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const prompts = interactive ? (options.prompts ?? (await clackPrompts())) : null;
  if (prompts) io.stdout.write(`${BANNER}v${options.version ?? "?"}\n\nWelcome to Bub! Let's get you set up.\n`);
  const path = framework.settings.file.path;
  const check = options.check ?? interactive;
  try {
    const [existing, wizard, { checkModel }] = await Promise.all([
      readConfigFile(path).then((file) => structuredClone(file.data)),
      import("./onboard-wizard.ts"),
      import("./onboard-check.ts"),
    ]);
    const channelNames = [...framework.runtime.callSync("provideChannels", { messageHandler: async () => {} }).keys()].filter((name) => name !== "cli");
    let builtin: Record<string, unknown>;
    let fromFlags: Record<string, unknown>;
    try {
      fromFlags = flags.fragmentFromAnswers(given, channelNames);
      if (!prompts) builtin = await builtinFromAnswers(existing, given);
      else {
        prompts.intro("bub onboard");
        const checkFragment = (fragment: Record<string, unknown>) => checkModel(mergeConfig(structuredClone(existing), fragment, fromFlags), framework.env, { path });
        builtin = await wizard.askBuiltin(prompts, { existing, current: currentModel(existing), channelNames, given, check: check ? checkFragment : null });
      }
    } catch (error) {
      if (error instanceof flags.OnboardUsageError) {
        io.stderr.write(`bub: ${error.message}\n`);
        return 2;
      }
      if (!(error instanceof wizard.Cancelled)) throw error;
      prompts?.cancel("Onboarding cancelled; nothing was written.");
      return 1;
    }
    const fragments = await collectOnboardConfig(framework);
    const merged = mergeConfig(existing, builtin, fromFlags, fragments);
    await framework.settings.validate(merged, path);
    if (check && !prompts) {
      const result = await checkModel(merged, framework.env, { path });
      if (result.problem !== null) {
        io.stderr.write(`bub: the check of ${result.model} failed: ${result.problem} — nothing was written; fix the options, or pass --no-check to save anyway\n`);
        return 1;
      }
      io.stdout.write(`Checked ${result.model}: it answered.\n`);
    }
    await writeConfigFile(path, merged);
    prompts?.outro(`Saved config to ${path}`);
    io.stdout.write(`Saved config to ${path}\n${startHint(merged, framework.env, channelNames)}`);
    return 0;
  } catch (error) {
    const { describeError } = await import("../../kernel/errors.ts");
    io.stderr.write(`bub: onboarding failed: ${describeError(error)} — nothing was written; fix the problem and run \`bub onboard\` again\n`);
    return 1;
  }
}

/** `value` as one shell word. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The lines that end the wizard: the exact commands that start bub with this config (`bub
 * chat`, and `bub gateway` when the Telegram channel has a token), with the `BUB_HOME` in
 * use, and the variables the config refers to.
 */
export function startHint(config: Record<string, unknown>, env: NodeJS.ProcessEnv, channelNames: readonly string[]): string {
  const prefix = env.BUB_HOME ? `BUB_HOME=${shellWord(env.BUB_HOME)} ` : "";
  const telegram = isRecord(config.telegram) ? config.telegram : {};
  const token = typeof telegram.token === "string" && telegram.token.trim() !== "" ? telegram.token : (env.BUB_TELEGRAM_TOKEN ?? "");
  const enabled = (typeof config.enabled_channels === "string" ? config.enabled_channels : "all").split(",").map((item) => item.trim());
  const gateway = channelNames.includes("telegram") && token !== "" && (enabled.includes("telegram") || enabled.includes("all"));
  const lines = ["", "Start bub:", `  ${prefix}bub chat${gateway ? "       # chat in this terminal" : ""}`];
  if (gateway) lines.push(`  ${prefix}bub gateway    # serve the Telegram bot`);
  const names = [...new Set([...JSON.stringify(config).matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1]))];
  const unset = names.filter((name) => !env[name]);
  if (unset.length > 0) lines.push(`config.yml reads ${unset.join(", ")} from the environment: set ${unset.length === 1 ? "it" : "them"} first.`);
  return `${lines.join("\n")}\n`;
}

/** Adds the options that answer the questions ahead (see onboard-flags.ts) to `bub onboard`. */
function addAnswerOptions(command: Command): Command {
  return command
    .option("--provider <id>", "LLM provider (openrouter, openai, anthropic, ollama, ... or any other id)")
    .option("--model <model>", "model as provider:name, or the name alone with --provider")
    .option("--api-key <key>", "API key, stored in config.yml")
    .option("--api-key-env <VAR>", "name of an environment variable holding the API key; config.yml refers to it as ${VAR}")
    .option("--api-base <url>", "base URL of an OpenAI-compatible server")
    .option("--channels <list>", "channels `bub gateway` runs, comma separated, or all")
    .option("--stream-output", "stream answers while they are written")
    .option("--no-stream-output", "show answers once they are complete")
    .option("--telegram-token <token>", "Telegram bot token, stored in config.yml")
    .option("--telegram-token-env <VAR>", "name of an environment variable holding the bot token")
    .option("--telegram-allow-users <list>", "Telegram user ids or usernames allowed to talk to the bot, comma separated")
    .option("--telegram-allow-chats <list>", "Telegram chat ids the bot answers in, comma separated")
    .option("--check", "without questions too: check the model with one short request before saving (a failure writes nothing)")
    .option("--no-check", "do not check the model before saving")
    .option("-y, --yes", "ask nothing: use the options and keep everything else as it is");
}

/** Adds `bub onboard` to the program. */
export function registerOnboardCommand(app: Command, framework: BubFramework, version?: string): void {
  const command = app.command("onboard").description("set up the model, API key and channels in <BUB_HOME>/config.yml (asks, or takes options)");
  addAnswerOptions(command)
    .addHelpText(
      "after",
      `
The answers are merged into the existing config file: settings the wizard does not ask
about are kept. The model answers are checked with one short request before saving (a
failure lets you answer again or save anyway; --no-check skips it). Ctrl-C at any
question cancels and writes nothing. On a stdin that is not a terminal, each line answers
the next question (an empty line takes the default). Each option answers its question
ahead; with --yes, or when stdin is not a terminal and options are given, nothing is asked
and only the given settings change (--model is required when config.yml names no model
yet; --check checks the model then too).

Examples:
  $ bub onboard
  $ BUB_HOME=~/.bub-work bub onboard     # set up a second home
  $ bub onboard --model openai:gpt-4o-mini --api-key-env OPENAI_KEY --yes
  $ bub onboard --model local:any --api-base http://127.0.0.1:8080/v1 --yes
  $ bub onboard --telegram-token-env TG_TOKEN --telegram-allow-users alice,123456789 --yes`,
    )
    .action(async (options: Record<string, unknown>) => {
      const { answersFromOptions, hasAnswers } = await import("./onboard-flags.ts");
      const answers = answersFromOptions(options);
      const interactive = options.yes !== true && (process.stdin.isTTY === true || !hasAnswers(answers));
      // Not a terminal: the questions are answered by the lines of stdin.
      const lines = interactive && !process.stdin.isTTY ? (await import("./onboard-lines.ts")).linePrompts(process.stdin, process.stdout) : null;
      const check = typeof options.check === "boolean" ? options.check : undefined;
      try {
        const code = await runOnboard(framework, { version: version ?? app.version(), answers, interactive, check, ...(lines ? { prompts: lines } : {}) });
        if (code !== 0) process.exitCode = code;
      } finally {
        lines?.close();
      }
    });
}

/** Every plugin's `onboardConfig` fragment in registration order, deep-merged, then validated. */
export async function collectOnboardConfig(framework: BubFramework): Promise<Record<string, unknown>> {
  const { args } = framework.runtime.callSync("onboardConfig", { currentConfig: {} });
  return framework.settings.validate(args.currentConfig);
}
