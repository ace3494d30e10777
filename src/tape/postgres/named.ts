/**
 * Statements sent as named (prepared) statements: PostgreSQL parses and plans an unnamed
 * statement on every call, while a named one is parsed once per connection and, after a
 * few calls, runs on a cached generic plan when that is not costlier than planning each
 * time. For the statements every message runs (tape append and read, the queue's and the
 * delivery ledger's), planning was a third of the database's time per message.
 */
import { createHash } from "node:crypto";

/** A statement as `pg`'s `query({ name, text })` takes it. */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * The named form of `text`: its name is a hash of the text, so every connection gives one
 * text the same name and two texts never share one (`pg` prepares a name once per connection).
 */
export function namedStatement(text: string): NamedStatement {
  return { name: `bub_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`, text };
}
