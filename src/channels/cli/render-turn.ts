/**
 * The glue between a turn's stream and the terminal: what live rendering needs (the Markdown
 * renderer, the terminal's live region) is loaded once, and each turn's events go through a
 * `TurnPrinter` until the stream ends or the turn is interrupted.
 */
import type { AsyncStreamEvents, StreamEvent } from "../../kernel/stream.ts";
import { loadMarkdownRenderer, type MarkdownRenderer } from "./markdown.ts";
import type { Terminal } from "./terminal.ts";
import type { TurnPrinter } from "./turn-printer.ts";

const ABORTED = Symbol("aborted");

/** What live rendering needs on one terminal: the Markdown renderer and the terminal's live region, loaded once. */
export class LiveRendering {
  #markdown: Promise<MarkdownRenderer> | null = null;
  #prepared: Promise<void> | null = null;

  /** Starts loading, on an interactive terminal, without waiting (a failure means plain output). */
  preload(terminal: Terminal): void {
    if (!terminal.interactive) return;
    this.#markdown ??= loadMarkdownRenderer();
    this.#prepared ??= terminal.prepare();
    this.#markdown.catch(() => {});
    this.#prepared.catch(() => {});
  }

  /** Loads what `terminal` needs; resolves with the Markdown renderer, or null for plain output. */
  async ready(terminal: Terminal): Promise<MarkdownRenderer | null> {
    if (terminal.interactive) {
      this.#markdown ??= loadMarkdownRenderer();
      this.#prepared ??= terminal.prepare();
    }
    const markdown = this.#markdown ? await this.#markdown.catch(() => null) : null;
    await this.#prepared?.catch(() => {});
    return markdown;
  }
}

/**
 * Prints a turn's stream with `printer` and passes its events on, leading whitespace aside.
 * When `signal` aborts, the stream is abandoned and the turn shown as interrupted.
 */
export async function* printTurn(printer: TurnPrinter, stream: AsyncStreamEvents, signal: AbortSignal): AsyncIterable<StreamEvent> {
  printer.begin();
  const source = stream[Symbol.asyncIterator]();
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    if (signal.aborted) resolve(ABORTED);
    signal.addEventListener("abort", () => resolve(ABORTED), { once: true });
  });
  try {
    for (;;) {
      // Aborted already: nothing more is read.
      const next = signal.aborted ? ABORTED : await Promise.race([source.next(), aborted]);
      if (next === ABORTED) {
        source.return?.(undefined).catch(() => {});
        printer.interrupted();
        return;
      }
      if (next.done) return;
      if (printer.handle(next.value)) yield next.value;
    }
  } finally {
    printer.finish();
  }
}
