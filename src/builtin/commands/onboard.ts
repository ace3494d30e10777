/**
 * `bub onboard`: a wizard for `<BUB_HOME>/config.yml`. It asks for the model, key, base URL,
 * channels and streaming, adds every plugin's `onboardConfig` fragment, validates the result
 * and merges it into the existing file (keys it did not ask about are kept). Cancelling any
 * question writes nothing.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

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

/** Asks the builtin questions and returns the builtin fragment of the config. */
async function askBuiltin(prompts: OnboardPrompts, existing: Record<string, unknown>, channelNames: string[]): Promise<Record<string, unknown>> {
  const answer = async <T>(value: Promise<T | symbol>): Promise<T> => {
    const settled = await value;
    if (prompts.isCancel(settled)) throw new Cancelled();
    return settled as T;
  };
  const current = splitModel(typeof existing.model === "string" && existing.model !== "" ? existing.model : DEFAULT_MODEL);
  const providers: string[] = [...ONBOARD_PROVIDERS];
  if (!providers.includes(current.provider)) providers.push(current.provider);
  let provider = await answer(
    prompts.select({
      message: "LLM provider",
      options: [...providers.map((value) => ({ value })), { value: "custom", label: "custom", hint: "any other provider id" }],
      initialValue: current.provider,
    }),
  );
  if (provider === "custom") {
    provider = (await answer(prompts.text({ message: "Custom provider", placeholder: "e.g. together" }))).trim();
    if (provider === "") provider = current.provider;
  }
  const defaultName = provider === current.provider ? current.name : "";
  const typed = (
    await answer(prompts.text({ message: "LLM model", placeholder: defaultName || "model name", defaultValue: defaultName, initialValue: defaultName }))
  ).trim();
  const name = typed || defaultName || current.name;
  const apiKey = (await answer(prompts.password({ message: "API key (optional, hidden)" }))).trim();
  const apiBase = (await answer(prompts.text({ message: "API base (optional)", placeholder: "e.g. http://127.0.0.1:11434/v1" }))).trim();
  const fragment: Record<string, unknown> = { model: `${provider}:${name}` };
  if (apiKey) fragment.api_key = apiKey;
  if (apiBase) fragment.api_base = apiBase;
  if (channelNames.length > 0) {
    const configured = typeof existing.enabled_channels === "string" ? existing.enabled_channels : "all";
    const listed = configured.split(",").map((item) => item.trim()).filter((item) => item !== "");
    const initialValues = listed.includes("all") || listed.length === 0 ? channelNames : channelNames.filter((channel) => listed.includes(channel));
    const chosen = await answer(
      prompts.multiselect({ message: "Channels to enable (space toggles)", options: channelNames.map((value) => ({ value })), initialValues, required: false }),
    );
    fragment.enabled_channels = chosen.join(",");
  }
  fragment.stream_output = await answer(
    prompts.confirm({ message: "Stream output (show answers while they are written)", initialValue: existing.stream_output === true }),
  );
  return fragment;
}

/** Options of {@link runOnboard}. */
export interface OnboardOptions {
  prompts?: OnboardPrompts;
  io?: OnboardIO;
  version?: string;
}

/**
 * Runs the wizard and writes the config file. Returns the exit code: 0 saved, 1 cancelled
 * or failed (nothing written).
 */
export async function runOnboard(framework: BubFramework, options: OnboardOptions = {}): Promise<number> {
  const io = options.io ?? { stdout: process.stdout, stderr: process.stderr };
  const prompts = options.prompts ?? ((await import("@clack/prompts")) as unknown as OnboardPrompts);
  const [{ readConfigFile, writeConfigFile }, { mergeConfig }] = await Promise.all([import("../../config/config-file.ts"), import("../../config/settings.ts")]);
  io.stdout.write(`${BANNER}v${options.version ?? "?"}\n\nWelcome to Bub! Let's get you set up.\n`);
  try {
    const existing = structuredClone((await readConfigFile(framework.configFile)).data);
    const channelNames = [...framework.getChannels(async () => {}).keys()].filter((name) => name !== "cli");
    prompts.intro("bub onboard");
    let builtin: Record<string, unknown>;
    try {
      builtin = await askBuiltin(prompts, existing, channelNames);
    } catch (error) {
      if (!(error instanceof Cancelled)) throw error;
      prompts.cancel("Onboarding cancelled; nothing was written.");
      return 1;
    }
    const fragments = await framework.collectOnboardConfig();
    const merged = mergeConfig(existing, builtin, fragments);
    await framework.settings.validate(merged, framework.configFile);
    await writeConfigFile(framework.configFile, merged);
    prompts.outro(`Saved config to ${framework.configFile}`);
    io.stdout.write(`Saved config to ${framework.configFile}\n`);
    return 0;
  } catch (error) {
    const { describeError } = await import("../../kernel/errors.ts");
    io.stderr.write(`Onboarding failed: ${describeError(error)}. Nothing was written; fix the problem and run \`bub onboard\` again.\n`);
    return 1;
  }
}

/** Adds `bub onboard` to the program. */
export function registerOnboardCommand(app: Command, framework: BubFramework, version?: string): void {
  app
    .command("onboard")
    .description("set up the model, API key and channels in <BUB_HOME>/config.yml, interactively")
    .addHelpText(
      "after",
      `
The answers are merged into the existing config file: settings the wizard does not ask
about are kept. Ctrl-C at any question cancels and writes nothing.

Examples:
  $ bub onboard
  $ BUB_HOME=~/.bub-work bub onboard     # set up a second home`,
    )
    .action(async () => {
      if (!process.stdin.isTTY) {
        throw new Error(`bub onboard asks questions and needs an interactive terminal. Run it in a terminal, or write ${framework.configFile} by hand (see docs/configuration.md)`);
      }
      const code = await runOnboard(framework, { version: version ?? app.version() });
      if (code !== 0) process.exitCode = code;
    });
}
