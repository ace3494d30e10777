/**
 * The model `bub chat --model <id>` gives the chat's turns: sent as the messages'
 * `context.model`, so it is used for this chat only and never saved to the session. A
 * successful `,model <id>` in the chat ends it (the session's own model applies again, now
 * the one just chosen).
 */
import type { StreamEvent } from "../../kernel/stream.ts";

const SWITCH = /^,model\s+\S/;

/** See the module comment. */
export class TurnModel {
  #id: string | null;

  constructor(id?: string | null) {
    this.#id = id ? id : null;
  }

  /** The model the next turn is given, or null for the session's own. */
  get id(): string | null {
    return this.#id;
  }

  /** The context fields a message of this chat carries. */
  context(): { model?: string } {
    return this.#id ? { model: this.#id } : {};
  }

  /** Passes on the events of the turn for `content`: a `,model <id>` that ends ok ends the override. */
  async *watch(content: string, events: AsyncIterable<StreamEvent>): AsyncIterable<StreamEvent> {
    const switching = SWITCH.test(content.trim());
    for await (const event of events) {
      if (switching && event.kind === "final" && event.data.ok) this.#id = null;
      yield event;
    }
  }
}
