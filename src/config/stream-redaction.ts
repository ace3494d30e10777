/**
 * Redaction of text that arrives in pieces (a model's streamed deltas): a secret split
 * over two deltas — as a model that repeats a key token by token sends it — is caught as
 * well as one that arrives whole. See ./redaction.ts for the secrets and the marker.
 */
import { knownSecrets, redactSecrets, type Secret } from "./redaction.ts";

/** How many characters at the end of `text` could be the start of a secret (0: none). */
function secretPrefixAtEnd(text: string, secrets: readonly Secret[]): number {
  let held = 0;
  for (const { value } of secrets) {
    for (let length = Math.min(value.length - 1, text.length); length > held; length--) {
      if (text.endsWith(value.slice(0, length))) {
        held = length;
        break;
      }
    }
  }
  return held;
}

/**
 * Redacts a stream of text pieces: {@link push} answers what can be shown of the text so
 * far, with every known secret replaced by `[redacted:<setting>]`, and holds back an end
 * that could still become a secret with the next piece; {@link flush} answers what is held
 * once the stream ends (or something else is to be printed in between).
 *
 * ```ts
 * const stream = new StreamRedactor();
 * stream.push("the key is sk-ab"); // "the key is " (sk-ab may be the start of the key)
 * stream.push("cdef0123 ok");      // "[redacted:BUB_API_KEY] ok"
 * stream.flush();                  // ""
 * ```
 */
export class StreamRedactor {
  readonly #secrets: () => readonly Secret[];
  #held = "";

  /** `secrets` is read on every piece (default: the process-wide list, which grows as settings are read). */
  constructor(secrets: () => readonly Secret[] = knownSecrets) {
    this.#secrets = secrets;
  }

  /** What may be shown now of what came so far (possibly ""). */
  push(piece: string): string {
    const secrets = this.#secrets();
    const text = redactSecrets(this.#held + piece, secrets);
    const held = secretPrefixAtEnd(text, secrets);
    this.#held = text.slice(text.length - held);
    return text.slice(0, text.length - held);
  }

  /** The text held back, now shown as it is (it is no whole secret), and the stream restarted. */
  flush(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }
}
