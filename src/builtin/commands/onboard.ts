/**
 * `bub onboard`: a wizard for `<BUB_HOME>/config.yml`. It asks for the model, key, base URL,
 * channels and streaming, adds every plugin's `onboardConfig` fragment, validates the result
 * and merges it into the existing file (keys it did not ask about are kept). Cancelling any
 * question writes nothing. Options answer questions ahead (see onboard-flags.ts); with
 * `--yes` nothing is asked at all.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { OnboardAnswers } from "./onboard-flags.ts";
import { mergeConfig } from "../../config/settings.ts";
import { providedChannels } from "../../channels/selection.ts";

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
}

/** Where the wizard writes its banner and result lines. */
export interface OnboardIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** The providers offered first, in this order; `custom` lets a person type any other. */
export const ONBOARD_PROVIDERS = ["openrouter", "openai", "anthropic", "gemini", "azure", "bedrock", "ollama", "groq", "mistral", "deepseek"] as const;

const DEFAULT_MODEL = "openrouter:openrouter/free";

class Cancelled extends Error {}

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
 * Asks the builtin questions the options did not answer and returns the builtin fragment
 * of the config (the options' own fragment is merged over it by the caller).
 */
async function askBuiltin(prompts: OnboardPrompts, existing: Record<string, unknown>, channelNames: string[], given: OnboardAnswers): Promise<Record<string, unknown>> {
  const { modelFromAnswers } = await import("./onboard-flags.ts");
  const answer = async <T>(value: Promise<T | symbol>): Promise<T> => {
    const settled = await value;
    if (prompts.isCancel(settled)) throw new Cancelled();
    return settled as T;
  };
  const current = currentModel(existing);
  const fromFlags = modelFromAnswers(given);
  const providers: string[] = [...ONBOARD_PROVIDERS];
  if (!providers.includes(current.provider)) providers.push(current.provider);
  let provider =
    fromFlags.provider ??
    (await answer(
      prompts.select({
        message: "LLM provider",
        options: [...providers.map((value) => ({ value })), { value: "custom", label: "custom", hint: "any other provider id" }],
        initialValue: current.provider,
      }),
    ));
  if (provider === "custom" && fromFlags.provider === undefined) {
    provider = (await answer(prompts.text({ message: "Custom provider", placeholder: "e.g. together" }))).trim();
    if (provider === "") provider = current.provider;
  }
  const defaultName = provider === current.provider ? current.name : "";
  const typed =
    fromFlags.name ??
    (await answer(prompts.text({ message: "LLM model", placeholder: defaultName || "model name", defaultValue: defaultName, initialValue: defaultName }))).trim();
  const name = typed || defaultName || current.name;
  const keyGiven = given.apiKey !== undefined || given.apiKeyEnv !== undefined;
  const apiKey = keyGiven ? "" : (await answer(prompts.password({ message: "API key (optional, hidden)" }))).trim();
  const apiBase = given.apiBase !== undefined ? "" : (await answer(prompts.text({ message: "API base (optional)", placeholder: "e.g. http://127.0.0.1:11434/v1" }))).trim();
  const fragment: Record<string, unknown> = { model: `${provider}:${name}` };
  if (apiKey) fragment.api_key = apiKey;
  if (apiBase) fragment.api_base = apiBase;
  if (channelNames.length > 0 && given.channels === undefined) {
    const configured = typeof existing.enabled_channels === "string" ? existing.enabled_channels : "all";
    const listed = configured.split(",").map((item) => item.trim()).filter((item) => item !== "");
    const initialValues = listed.includes("all") || listed.length === 0 ? channelNames : channelNames.filter((channel) => listed.includes(channel));
    const chosen = await answer(
      prompts.multiselect({ message: "Channels to enable (space toggles)", options: channelNames.map((value) => ({ value })), initialValues, required: false }),
    );
    fragment.enabled_channels = chosen.join(",");
  }
  if (given.streamOutput === undefined) {
    fragment.stream_output = await answer(
      prompts.confirm({ message: "Stream output (show answers while they are written)", initialValue: existing.stream_output === true }),
    );
  }
  return fragment;
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
    io.stderr.write(`bub: ${(error as Error).message}\n`);
    return 2;
  }
  const prompts = interactive ? (options.prompts ?? ((await import("@clack/prompts")) as unknown as OnboardPrompts)) : null;
  if (prompts) io.stdout.write(`${BANNER}v${options.version ?? "?"}\n\nWelcome to Bub! Let's get you set up.\n`);
  try {
    const existing = structuredClone((await readConfigFile(framework.settings.file.path)).data);
    const channelNames = [...providedChannels(framework.runtime, async () => {}).keys()].filter((name) => name !== "cli");
    let builtin: Record<string, unknown>;
    let fromFlags: Record<string, unknown>;
    try {
      fromFlags = flags.fragmentFromAnswers(given, channelNames);
      if (!prompts) builtin = await builtinFromAnswers(existing, given);
      else {
        prompts.intro("bub onboard");
        builtin = await askBuiltin(prompts, existing, channelNames, given);
      }
    } catch (error) {
      if (error instanceof flags.OnboardUsageError) {
        io.stderr.write(`bub: ${error.message}\n`);
        return 2;
      }
      if (!(error instanceof Cancelled)) throw error;
      prompts?.cancel("Onboarding cancelled; nothing was written.");
      return 1;
    }
    const fragments = await collectOnboardConfig(framework);
    const merged = mergeConfig(existing, builtin, fromFlags, fragments);
    await framework.settings.validate(merged, framework.settings.file.path);
    await writeConfigFile(framework.settings.file.path, merged);
    prompts?.outro(`Saved config to ${framework.settings.file.path}`);
    io.stdout.write(`Saved config to ${framework.settings.file.path}\n`);
    return 0;
  } catch (error) {
    const { describeError } = await import("../../kernel/errors.ts");
    io.stderr.write(`Onboarding failed: ${describeError(error)}. Nothing was written; fix the problem and run \`bub onboard\` again.\n`);
    return 1;
  }
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
about are kept. Ctrl-C at any question cancels and writes nothing. Each option answers
its question ahead; with --yes, or when stdin is not a terminal and options are given,
nothing is asked and only the given settings change (--model is required when config.yml
names no model yet).

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
      if (interactive && !process.stdin.isTTY) {
        throw new Error(
          `bub onboard asks questions and needs an interactive terminal. Run it in a terminal, pass the answers as options (bub onboard --model provider:name --yes; see bub onboard --help), or write ${framework.settings.file.path} by hand`,
        );
      }
      const code = await runOnboard(framework, { version: version ?? app.version(), answers, interactive });
      if (code !== 0) process.exitCode = code;
    });
}

/** Every plugin's `onboardConfig` fragment in registration order, deep-merged, then validated. */
export async function collectOnboardConfig(framework: BubFramework): Promise<Record<string, unknown>> {
  const current: Record<string, unknown> = {};
  for (const fragment of framework.runtime.eachSync("onboardConfig", { currentConfig: current }, { order: "registration" })) {
    if (fragment === null || fragment === undefined) continue;
    if (typeof fragment !== "object" || Array.isArray(fragment)) throw new TypeError("hook.onboardConfig must return an object or null");
    mergeConfig(current, fragment as Record<string, unknown>);
  }
  return framework.settings.validate(current);
}
