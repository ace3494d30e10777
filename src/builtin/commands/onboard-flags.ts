/**
 * `bub onboard`'s answers given as options, so the wizard can run without questions
 * (`--yes`, or stdin that is not a terminal). Each option answers one question, or sets a
 * key the wizard does not ask about (the Telegram ones); the config keys they write are
 * the wizard's. Loaded only when `bub onboard` runs (the options themselves are declared in
 * onboard.ts).
 */
/** What the options answer. Every field is optional; an empty string counts as not given. */
export interface OnboardAnswers {
  /** Provider id (`openai`); `--model provider:name` gives it too. */
  provider?: string;
  /** `provider:name`, or the name alone. */
  model?: string;
  /** A literal key, saved in `api_key`. */
  apiKey?: string;
  /** The name of a variable holding the key; saved as `api_key: ${NAME}`. */
  apiKeyEnv?: string;
  apiBase?: string;
  /** Comma-separated channel names, or `all` (`enabled_channels`). */
  channels?: string;
  streamOutput?: boolean;
  telegramToken?: string;
  /** The name of a variable holding the bot token; saved as `telegram.token: ${NAME}`. */
  telegramTokenEnv?: string;
  telegramAllowUsers?: string;
  telegramAllowChats?: string;
}

/** A problem with the options: reported in one line, exit code 2. */
export class OnboardUsageError extends Error {}

const STRING_ANSWERS = ["provider", "model", "apiKey", "apiKeyEnv", "apiBase", "channels", "telegramToken", "telegramTokenEnv", "telegramAllowUsers", "telegramAllowChats"] as const;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Picks the answers out of commander's options (trimmed; empty strings dropped). */
export function answersFromOptions(options: Record<string, unknown>): OnboardAnswers {
  const answers: OnboardAnswers = {};
  for (const key of STRING_ANSWERS) {
    const value = options[key];
    if (typeof value === "string" && value.trim() !== "") answers[key] = value.trim();
  }
  if (typeof options.streamOutput === "boolean") answers.streamOutput = options.streamOutput;
  return answers;
}

/** True when at least one answer was given. */
export function hasAnswers(answers: OnboardAnswers): boolean {
  return Object.keys(answers).length > 0;
}

/** Throws {@link OnboardUsageError} for options that contradict each other or are malformed. */
export function checkAnswers(answers: OnboardAnswers): void {
  if (answers.apiKey !== undefined && answers.apiKeyEnv !== undefined) throw new OnboardUsageError("give --api-key or --api-key-env, not both");
  if (answers.telegramToken !== undefined && answers.telegramTokenEnv !== undefined) {
    throw new OnboardUsageError("give --telegram-token or --telegram-token-env, not both");
  }
  for (const [option, name] of [["--api-key-env", answers.apiKeyEnv], ["--telegram-token-env", answers.telegramTokenEnv]] as const) {
    // The value is not echoed: a shell that expanded `$MY_KEY` would print the secret.
    if (name !== undefined && !VARIABLE_NAME.test(name)) throw new OnboardUsageError(`${option} takes the name of an environment variable (such as MY_KEY), not its value`);
  }
  if (answers.provider !== undefined && !/^[\w.-]+$/.test(answers.provider)) throw new OnboardUsageError(`--provider '${answers.provider}' is not a provider id (such as openai)`);
}

/**
 * The provider and model name the options give. With `--provider`, `--model` is the name
 * (a leading `<provider>:` is dropped); without it, `--model provider:name` is split at the
 * first `:` and a model without `:` is a name alone.
 */
export function modelFromAnswers(answers: OnboardAnswers): { provider?: string; name?: string } {
  const { provider, model } = answers;
  if (model === undefined) return provider === undefined ? {} : { provider };
  if (provider !== undefined) return { provider, name: model.startsWith(`${provider}:`) ? model.slice(provider.length + 1) : model };
  const index = model.indexOf(":");
  if (index > 0 && index < model.length - 1) return { provider: model.slice(0, index), name: model.slice(index + 1) };
  return { name: model };
}

/**
 * The config the options other than the model write: `api_key`, `api_base`,
 * `enabled_channels`, `stream_output` and `telegram:`. `channelNames` are the channels
 * `--channels` may name (besides `all`).
 */
export function fragmentFromAnswers(answers: OnboardAnswers, channelNames: readonly string[]): Record<string, unknown> {
  const fragment: Record<string, unknown> = {};
  if (answers.apiKey !== undefined) fragment.api_key = answers.apiKey;
  if (answers.apiKeyEnv !== undefined) fragment.api_key = `\${${answers.apiKeyEnv}}`;
  if (answers.apiBase !== undefined) fragment.api_base = answers.apiBase;
  if (answers.channels !== undefined) {
    const chosen = answers.channels.split(",").map((item) => item.trim()).filter((item) => item !== "");
    const unknown = chosen.filter((channel) => channel !== "all" && !channelNames.includes(channel));
    if (unknown.length > 0) {
      throw new OnboardUsageError(`--channels names unknown channel '${unknown[0]}' (choose from: all${channelNames.map((name) => `, ${name}`).join("")})`);
    }
    fragment.enabled_channels = chosen.join(",");
  }
  if (answers.streamOutput !== undefined) fragment.stream_output = answers.streamOutput;
  const telegram: Record<string, unknown> = {};
  if (answers.telegramToken !== undefined) telegram.token = answers.telegramToken;
  if (answers.telegramTokenEnv !== undefined) telegram.token = `\${${answers.telegramTokenEnv}}`;
  if (answers.telegramAllowUsers !== undefined) telegram.allow_users = answers.telegramAllowUsers;
  if (answers.telegramAllowChats !== undefined) telegram.allow_chats = answers.telegramAllowChats;
  if (Object.keys(telegram).length > 0) fragment.telegram = telegram;
  return fragment;
}
