/**
 * How the chat turns input lines into messages. A bracketed paste (the terminal wraps pasted
 * text in `ESC[200~` … `ESC[201~` once `ESC[?2004h` asked it to) is one message however many
 * lines it has; so is a run of lines each ending in `\` (the `\` is dropped) and the line
 * after them. In a terminal, readline reports the markers as `paste-start` / `paste-end`
 * keys; in piped input they arrive as text inside the lines and work the same way.
 */

/** Asks a terminal to wrap pasted text in markers. */
export const ENABLE_BRACKETED_PASTE = "\u001B[?2004h";
/** Turns the markers off again. */
export const DISABLE_BRACKETED_PASTE = "\u001B[?2004l";
const PASTE_START = "\u001B[200~";
const PASTE_END = "\u001B[201~";

/** Collects input lines until they make one message. */
export class MessageAssembler {
  #parts: string[] = [];
  #pasting = false;
  /** Part of the current line came from a paste: its trailing `\` is text, not a continuation. */
  #pastedLine = false;

  /** A paste began (readline's `paste-start` key). */
  pasteStart(): void {
    this.#pasting = true;
    this.#pastedLine = true;
  }

  /** The paste ended (readline's `paste-end` key); the message ends with the next line break. */
  pasteEnd(): void {
    this.#pasting = false;
  }

  /** Whether lines are being collected (inside a paste, or after a `\`). */
  get collecting(): boolean {
    return this.#pasting || this.#parts.length > 0;
  }

  /** Whether the collection is a paste still under way (no prompt should be shown). */
  get pasting(): boolean {
    return this.#pasting;
  }

  /** What was collected so far as a message (the input ended), or null when nothing was. */
  flush(): string | null {
    if (!this.collecting) return null;
    const message = this.#parts.join("\n");
    this.reset();
    return message;
  }

  /** Forgets what was collected (Ctrl-C). */
  reset(): void {
    this.#parts = [];
    this.#pasting = false;
    this.#pastedLine = false;
  }

  /**
   * Adds one line; returns the whole message once it is complete, else null.
   *
   * ```ts
   * const input = new MessageAssembler();
   * input.push("first \\");  // null
   * input.push("second");    // "first \nsecond"
   * ```
   */
  push(raw: string): string | null {
    const line = this.#stripMarkers(raw);
    if (this.#pasting) {
      this.#parts.push(line);
      return null;
    }
    const pasted = this.#pastedLine;
    this.#pastedLine = false;
    if (!pasted && line.endsWith("\\")) {
      this.#parts.push(line.slice(0, -1));
      return null;
    }
    const message = [...this.#parts, line].join("\n");
    this.#parts = [];
    return message;
  }

  /** Removes the paste markers from a line, following the paste state they announce. */
  #stripMarkers(raw: string): string {
    if (!raw.includes("\u001B[20")) return raw;
    let text = "";
    let rest = raw;
    for (;;) {
      const start = rest.indexOf(PASTE_START);
      const end = rest.indexOf(PASTE_END);
      const next = start >= 0 && (end < 0 || start < end) ? start : end;
      if (next < 0) return text + rest;
      text += rest.slice(0, next);
      if (next === start) this.pasteStart();
      else this.pasteEnd();
      rest = rest.slice(next + PASTE_START.length);
    }
  }
}

/**
 * Messages that must wait for the turn before them (piped input: every line is its own turn,
 * answered in the order the lines came). `send` is called for one message at a time, when
 * `idle()` says the previous one is done; call {@link drain} whenever that may have changed.
 */
export class SerialMessages {
  readonly #waiting: string[] = [];
  readonly #idle: () => boolean;
  readonly #send: (message: string) => void;

  constructor(idle: () => boolean, send: (message: string) => void) {
    this.#idle = idle;
    this.#send = send;
  }

  /** Messages not yet sent. */
  get size(): number {
    return this.#waiting.length;
  }

  /** Sends `message` now when nothing runs and nothing waits, else queues it. */
  add(message: string): void {
    this.#waiting.push(message);
    this.drain();
  }

  /** Sends waiting messages while the previous one is done (a `,thinking` starts no turn). */
  drain(): void {
    while (this.#waiting.length > 0 && this.#idle()) {
      const next = this.#waiting.shift();
      if (next !== undefined) this.#send(next);
    }
  }

  /** Sends every waiting message, each once the one before it is done, until `stopped()`. */
  async sendAll(whenIdle: () => Promise<void>, stopped: () => boolean): Promise<void> {
    while (this.#waiting.length > 0 && !stopped()) {
      this.drain();
      await whenIdle();
    }
  }

  /** Drops every waiting message. */
  clear(): void {
    this.#waiting.length = 0;
  }
}
