/**
 * A fake model for the gateway suites: it answers `re: <message>` to the latest user message
 * it was given (the first match of the suite's message pattern), and can be told to let the
 * next calls hang (never answer) so a test has a turn to cut off.
 */
import { reply, type FakeReply, type RecordedRequest } from "../../support/fake-openai.ts";

export interface EchoModel {
  /** How many model calls from now on hang (never answer): a turn to cut off. */
  hangs: number;
  /** The first match of the message pattern in the request's latest user message, else `?`. */
  latest(request: RecordedRequest): string;
  /** A scripted reply: hangs while `hangs` is above 0 (counting it down), else `re: <latest>`. */
  readonly answer: (request: RecordedRequest) => FakeReply;
}

/** An {@link EchoModel} whose messages match `pattern`, each reply `delayMs` late if given. */
export function echoModel(pattern: RegExp, options: { delayMs?: number } = {}): EchoModel {
  const model: EchoModel = {
    hangs: 0,
    latest(request) {
      const user = request.body.messages.filter((message) => message.role === "user").at(-1);
      return pattern.exec(JSON.stringify(user?.content ?? ""))?.[0] ?? "?";
    },
    answer(request) {
      if (model.hangs > 0) {
        model.hangs--;
        return reply.hang();
      }
      const text = `re: ${model.latest(request)}`;
      return options.delayMs === undefined ? reply.text(text) : reply.text(text, { delayMs: options.delayMs });
    },
  };
  return model;
}
