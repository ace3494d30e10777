/**
 * The questions of `bub onboard`, in order: the model (provider, name, key, base URL), a
 * check that the model answers, the channels and, when Telegram is among them, its bot token
 * and allowlist, then streaming. Questions answered ahead by options are not asked. The
 * result is the builtin fragment of the config; the caller merges and saves it.
 */
import type { OnboardAnswers } from "./onboard-flags.ts";
import type { ModelCheck } from "./onboard-check.ts";
import type { OnboardPrompts } from "./onboard.ts";
import { isRecord } from "../../kernel/guards.ts";

/** A question was cancelled (Ctrl-C, or the end of piped answers): nothing is written. */
export class Cancelled extends Error {}

/** The providers offered first, in this order; `custom` lets a person type any other. */
export const ONBOARD_PROVIDERS = ["openrouter", "openai", "anthropic", "gemini", "azure", "bedrock", "ollama", "groq", "mistral", "deepseek"] as const;

/** The model part of the answers. */
interface ModelAnswers {
  provider: string;
  name: string;
  apiKey: string;
  apiBase: string;
}

/** What the wizard needs besides the prompts. */
export interface WizardContext {
  /** The config file as it is. */
  readonly existing: Record<string, unknown>;
  /** The configured model split into provider and name (the default one when none is set). */
  readonly current: { provider: string; name: string };
  /** Channels a plugin provides, except `cli`. */
  readonly channelNames: readonly string[];
  readonly given: OnboardAnswers;
  /** Checks the model this fragment selects; null: no check. */
  readonly check: ((fragment: Record<string, unknown>) => Promise<ModelCheck>) | null;
}

function answerOf(prompts: OnboardPrompts): <T>(value: Promise<T | symbol>) => Promise<T> {
  return async (value) => {
    const settled = await value;
    if (prompts.isCancel(settled)) throw new Cancelled();
    return settled;
  };
}

function say(prompts: OnboardPrompts, level: "info" | "success" | "error", message: string): void {
  prompts.log?.[level](message);
}

/** Asks the model questions; `previous` (after a failed check) gives the defaults. */
async function askModel(prompts: OnboardPrompts, context: WizardContext, previous: ModelAnswers | null): Promise<ModelAnswers> {
  const { modelFromAnswers } = await import("./onboard-flags.ts");
  const answer = answerOf(prompts);
  const { current, given } = context;
  const fromFlags = modelFromAnswers(given);
  const initialProvider = previous?.provider ?? current.provider;
  const providers: string[] = [...ONBOARD_PROVIDERS];
  if (!providers.includes(initialProvider)) providers.push(initialProvider);
  let provider =
    fromFlags.provider ??
    (await answer(
      prompts.select({
        message: "LLM provider",
        options: [...providers.map((value) => ({ value })), { value: "custom", label: "custom", hint: "any other provider id" }],
        initialValue: initialProvider,
      }),
    ));
  if (provider === "custom" && fromFlags.provider === undefined) {
    provider = (await answer(prompts.text({ message: "Custom provider", placeholder: "e.g. together" }))).trim();
    if (provider === "") provider = initialProvider;
  }
  const defaultName = provider === previous?.provider ? previous.name : provider === current.provider ? current.name : "";
  const typed =
    fromFlags.name ??
    (await answer(prompts.text({ message: "LLM model", placeholder: defaultName || "model name", defaultValue: defaultName, initialValue: defaultName }))).trim();
  const name = typed || defaultName || current.name;
  const keyGiven = given.apiKey !== undefined || given.apiKeyEnv !== undefined;
  const keyPrompt = previous?.apiKey ? "API key (optional, hidden; empty keeps the one you gave)" : "API key (optional, hidden; ${NAME} reads it from a variable)";
  const apiKey = keyGiven ? "" : (await answer(prompts.password({ message: keyPrompt }))).trim() || (previous?.apiKey ?? "");
  const apiBase =
    given.apiBase !== undefined
      ? ""
      : (await answer(prompts.text({ message: "API base (optional)", placeholder: "e.g. http://127.0.0.1:11434/v1", defaultValue: previous?.apiBase, initialValue: previous?.apiBase }))).trim() ||
        (previous?.apiBase ?? "");
  return { provider, name, apiKey, apiBase };
}

function modelFragment(answers: ModelAnswers): Record<string, unknown> {
  const fragment: Record<string, unknown> = { model: `${answers.provider}:${answers.name}` };
  if (answers.apiKey) fragment.api_key = answers.apiKey;
  if (answers.apiBase) fragment.api_base = answers.apiBase;
  return fragment;
}

/**
 * Asks the model questions and checks the answers with one short request; after a failure
 * the person checks again, answers the model questions again, or saves anyway.
 */
async function askCheckedModel(prompts: OnboardPrompts, context: WizardContext): Promise<Record<string, unknown>> {
  const answer = answerOf(prompts);
  let answers = await askModel(prompts, context, null);
  for (;;) {
    const fragment = modelFragment(answers);
    if (!context.check) return fragment;
    say(prompts, "info", `Checking ${String(fragment.model)} with one short request...`);
    const result = await context.check(fragment);
    if (result.problem === null) {
      say(prompts, "success", `${result.model} answered: the key and the model work.`);
      return fragment;
    }
    say(prompts, "error", `The check of ${result.model} failed: ${result.problem}`);
    const next = await answer(
      prompts.select({
        message: "What now?",
        options: [
          { value: "edit", label: "edit", hint: "answer the model questions again" },
          { value: "retry", label: "retry", hint: "check the same answers again" },
          { value: "save", label: "save", hint: "save anyway" },
        ],
        initialValue: "edit",
      }),
    );
    if (next === "save") return fragment;
    if (next === "edit") answers = await askModel(prompts, context, answers);
  }
}

/** Asks which channels `bub gateway` runs (not asked when `--channels` answered it or none exists). */
async function askChannels(prompts: OnboardPrompts, context: WizardContext): Promise<string[] | null> {
  const { existing, channelNames, given } = context;
  if (channelNames.length === 0 || given.channels !== undefined) return null;
  const configured = typeof existing.enabled_channels === "string" ? existing.enabled_channels : "all";
  const listed = configured.split(",").map((item) => item.trim()).filter((item) => item !== "");
  const initialValues = listed.includes("all") || listed.length === 0 ? [...channelNames] : channelNames.filter((channel) => listed.includes(channel));
  return answerOf(prompts)(
    prompts.multiselect({ message: "Channels to enable", options: channelNames.map((value) => ({ value })), initialValues, required: false }),
  );
}

/**
 * Asks for the Telegram bot token and who may use the bot, when the Telegram channel is
 * enabled; options that answered a question skip it. Returns the `telegram:` fragment.
 */
async function askTelegram(prompts: OnboardPrompts, context: WizardContext, chosen: string[] | null): Promise<Record<string, unknown>> {
  const { existing, channelNames, given } = context;
  const wanted = chosen ?? given.channels?.split(",").map((item) => item.trim()) ?? ["all"];
  if (!channelNames.includes("telegram") || !(wanted.includes("telegram") || wanted.includes("all"))) return {};
  const answer = answerOf(prompts);
  const current = isRecord(existing.telegram) ? existing.telegram : {};
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  const fragment: Record<string, unknown> = {};
  if (given.telegramToken === undefined && given.telegramTokenEnv === undefined) {
    const hasToken = text(current.token).trim() !== "";
    const token = (
      await answer(
        prompts.password({
          message: hasToken
            ? "Telegram bot token (hidden; empty keeps the current one)"
            : "Telegram bot token from @BotFather (hidden; ${NAME} reads it from a variable; empty: no Telegram)",
        }),
      )
    ).trim();
    if (token) fragment.token = token;
    else if (!hasToken) {
      say(prompts, "info", "No Telegram bot token: the Telegram channel stays off (run bub onboard again to add one).");
      return {};
    }
  }
  const usersGiven = given.telegramAllowUsers !== undefined;
  const chatsGiven = given.telegramAllowChats !== undefined;
  let users = given.telegramAllowUsers ?? text(current.allow_users);
  let chats = given.telegramAllowChats ?? text(current.allow_chats);
  for (;;) {
    if (!usersGiven) {
      users = (
        await answer(prompts.text({ message: "Telegram users who may talk to the bot (user ids or usernames, comma separated)", defaultValue: users, initialValue: users }))
      ).trim();
    }
    if (!chatsGiven) {
      chats = (
        await answer(prompts.text({ message: "Telegram chats the bot answers in (chat ids, comma separated; optional)", defaultValue: chats, initialValue: chats }))
      ).trim();
    }
    // An option's value is never empty, so this loop ends once one is given.
    if (users || chats || current.allow_all === true) break;
    say(prompts, "error", "The bot serves nobody without an allowed user or chat (bub gateway would refuse to start): give at least one.");
  }
  if (!usersGiven) fragment.allow_users = users;
  if (!chatsGiven) fragment.allow_chats = chats;
  return { telegram: fragment };
}

/**
 * Asks every builtin question the options did not answer and returns the builtin fragment
 * of the config (the options' own fragment is merged over it by the caller).
 *
 * @throws Cancelled when a question is cancelled.
 */
export async function askBuiltin(prompts: OnboardPrompts, context: WizardContext): Promise<Record<string, unknown>> {
  const fragment = await askCheckedModel(prompts, context);
  const chosen = await askChannels(prompts, context);
  if (chosen !== null) fragment.enabled_channels = chosen.join(",");
  Object.assign(fragment, await askTelegram(prompts, context, chosen));
  if (context.given.streamOutput === undefined) {
    fragment.stream_output = await answerOf(prompts)(
      prompts.confirm({ message: "Stream output (show answers while they are written)", initialValue: context.existing.stream_output === true }),
    );
  }
  return fragment;
}
