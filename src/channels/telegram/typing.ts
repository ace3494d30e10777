/** The typing indicator Telegram shows while a turn runs, one loop per chat. */
import type { Bot } from "grammy";
import { createLogger } from "../../kernel/log.ts";
import type { ChannelMessage } from "../message.ts";

const log = createLogger("bub:telegram");

const TYPING_EVERY_MS = 4000;
/** A turn answered sooner than this shows no typing at all (one Bot API call saved per quick answer). */
const TYPING_AFTER_MS = 1000;

interface TypingLoop {
  users: number;
  timer: NodeJS.Timeout;
}

/** Sends `typing` to a chat once one of its turns has run for a second, then every few seconds while any runs. */
export class TypingIndicator {
  readonly #api: () => Bot["api"] | null;
  readonly #describeError: (error: unknown) => string;
  readonly #typing = new Map<string, TypingLoop>();

  /** `api` is the running bot's client (null while stopped). */
  constructor(api: () => Bot["api"] | null, describeError: (error: unknown) => string) {
    this.#api = api;
    this.#describeError = describeError;
  }

  /** A message lifespan that shows typing in `chatId` while its turn runs. */
  lifespan(chatId: string): NonNullable<ChannelMessage["lifespan"]> {
    return { enter: () => this.#start(chatId), exit: () => this.#stop(chatId) };
  }

  /** Stops every loop. */
  stopAll(): void {
    for (const loop of this.#typing.values()) clearInterval(loop.timer);
    this.#typing.clear();
  }

  #start(chatId: string): void {
    const running = this.#typing.get(chatId);
    if (running) {
      running.users++;
      return;
    }
    const send = () => {
      this.#api()?.sendChatAction(chatId, "typing").catch((error: unknown) => {
        log.warn(`telegram.typing stopped chat_id=${chatId}: ${this.#describeError(error)}`);
        const current = this.#typing.get(chatId);
        if (current) clearInterval(current.timer);
        this.#typing.delete(chatId);
      });
    };
    const loop = { users: 1, timer: setTimeout(() => {
      loop.timer = setInterval(send, TYPING_EVERY_MS);
      send();
    }, TYPING_AFTER_MS) };
    this.#typing.set(chatId, loop);
  }

  #stop(chatId: string): void {
    const loop = this.#typing.get(chatId);
    if (!loop) return;
    if (--loop.users > 0) return;
    clearInterval(loop.timer);
    this.#typing.delete(chatId);
  }
}
