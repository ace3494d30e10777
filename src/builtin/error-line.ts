/**
 * The one shape every `bub` error takes on stderr: `bub: <what happened> — <what to do>`,
 * and with `--verbose` the chain of causes under it. Known secrets are redacted.
 */
import { BubError, isErrorKind, type ErrorKind } from "../kernel/errors.ts";
import { redactSecrets } from "../config/redaction.ts";

/** What to do about a failure of each kind, when its message does not say. */
const ADVICE: Record<ErrorKind, string> = {
  invalid_input: "check the input and try again",
  config: "check the settings (`bub onboard`, or config.yml under BUB_HOME)",
  provider: "check the model id and the request, or try another model",
  tool: "check the command and its arguments (`,help` lists them)",
  temporary: "try again in a moment",
  timeout: "try again, or raise the timeout",
  not_found: "check the name and try again",
  unknown: "run again with --verbose to see the cause",
};

/** The sentences a message may end with that already say what to do. */
const IMPERATIVE = /^(?:Check|Set|Run|Send|Start|Fix|Use|Try|Pass|Install|Remove|Raise|Switch|Give|Choose|Call|Add)\b/;

/** A turn error's content as `onError` words it: `An error occurred at stage 'x': [kind] text`. */
const STAGE_PREFIX = /^An error occurred at stage '[^']*': /;
const KIND_PREFIX = /^\[([a-z_]+)\] /;

/** Options of {@link errorLine}. */
export interface ErrorLineOptions {
  /** Adds the error's chain of causes, one `  caused by: ...` line each. */
  readonly verbose?: boolean;
  /** Adds the stack of the error (BUB_DEBUG). */
  readonly stack?: boolean;
  /** The kind of an error given as text that does not name one (a failed comma command: `tool`). */
  readonly kind?: ErrorKind;
}

function kindOf(error: unknown): ErrorKind | null {
  return BubError.isInstance(error) ? error.kind : null;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message;
  return String(error);
}

/**
 * Splits a message into what happened and what to do: a message that already has ` — `
 * is kept; a last sentence starting with an imperative (`Check the API key (...).`)
 * becomes the advice; else the advice for `kind` is used. The lines after the first of a
 * longer message are `more`, printed indented under it.
 */
export function splitAdvice(message: string, kind: ErrorKind | null): { what: string; todo: string | null; more: string[] } {
  const [first = "", ...more] = message.trim().split("\n");
  const text = first.trim();
  if (message.includes(" — ")) return { what: text, todo: null, more };
  let cut = -1;
  for (const match of text.matchAll(/(?<=[.!?)])\s+(?=[A-Z])/g)) cut = match.index + match[0].length;
  if (cut > 0 && IMPERATIVE.test(text.slice(cut))) {
    const todo = text.slice(cut).replace(/\.$/, "");
    return { what: text.slice(0, cut).trim().replace(/\.$/, ""), todo: todo.charAt(0).toLowerCase() + todo.slice(1), more };
  }
  return { what: text.replace(/[.:]$/, ""), todo: kind === null ? null : ADVICE[kind], more };
}

/** `  details: {...}` of a {@link BubError} (the provider's status and answer, the model), cut at 600 characters. */
function detailLine(error: unknown): string[] {
  if (!BubError.isInstance(error) || !error.details) return [];
  const json = JSON.stringify(error.details);
  return [`  details: ${json.length > 600 ? `${json.slice(0, 600)}…` : json}`];
}

/** The `cause` of a thrown value, when it has one. */
function causeOf(error: unknown): unknown {
  return typeof error === "object" && error !== null && "cause" in error ? error.cause : undefined;
}

/** The details of `error`, then `  caused by: <message>` for each of its causes, at most eight deep. */
function causeLines(error: unknown): string[] {
  const lines: string[] = detailLine(error);
  let cause = causeOf(error);
  for (let depth = 0; cause !== undefined && cause !== null && depth < 8; depth++) {
    const name = cause instanceof Error && cause.name !== "Error" ? `${cause.name}: ` : "";
    lines.push(`  caused by: ${name}${messageOf(cause).replace(/\s*\n\s*/g, " ")}`);
    cause = causeOf(cause);
  }
  return lines;
}

/**
 * The stderr line(s) for `error`: `bub: <what happened> — <what to do>\n`. `error` may be
 * a turn error's text (an error outbound's content): its stage and kind prefixes are read
 * and dropped.
 */
export function errorLine(error: unknown, options: ErrorLineOptions = {}): string {
  let kind = kindOf(error);
  let message = typeof error === "string" ? error : messageOf(error);
  if (typeof error === "string") {
    kind = options.kind ?? null;
    message = message.replace(STAGE_PREFIX, "");
    const found = KIND_PREFIX.exec(message);
    if (found) {
      // A kind this version does not know gets no advice, like a message naming none.
      kind = isErrorKind(found[1]) ? found[1] : null;
      message = message.slice(found[0].length);
    }
  } else if (error instanceof Error && (error.name === "ConfigError" || error.name === "YamlError")) {
    kind = null;
  } else if (kind === null) {
    kind = "unknown";
  }
  const { what, todo, more } = splitAdvice(message, kind);
  let text = `bub: ${what}${todo ? ` — ${todo}` : ""}`;
  for (const line of more) text += `\n  ${line.trim()}`;
  if (options.verbose) text += causeLines(error).map((line) => `\n${line}`).join("");
  if (options.stack && error instanceof Error && error.stack) text += `\n${error.stack}`;
  return `${redactSecrets(text)}\n`;
}
