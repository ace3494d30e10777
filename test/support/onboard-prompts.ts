/**
 * Fake `bub onboard` prompts for the onboard tests: every question (select, text, password,
 * multiselect, confirm) goes to one answer function, and {@link CANCEL} is the cancel value.
 */
import type { OnboardPrompts } from "../../src/builtin/commands/onboard.ts";

/** The value a fake prompt returns to cancel the wizard. */
export const CANCEL = Symbol("cancel");

/** Answers one question, given its options. */
export type Answer = (options: { message: string; options?: unknown }) => Promise<unknown>;

/** Prompts whose every question `answer` answers; with `log`, the progress lines go there. */
export function answeringPrompts(answer: Answer, log?: OnboardPrompts["log"]): OnboardPrompts {
  return {
    intro: () => {},
    outro: () => {},
    cancel: () => {},
    select: answer,
    text: answer,
    password: answer,
    multiselect: answer,
    confirm: answer,
    isCancel: (value: unknown): value is symbol => value === CANCEL,
    ...(log === undefined ? {} : { log }),
  } as unknown as OnboardPrompts;
}
