/** The tape store the `bub tape` commands read: the one a turn would write to. */
import { BubError } from "../../kernel/errors.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import type { TapeStore } from "../../kernel/tape-contract.ts";

/**
 * Runs `body` with the configured tape store (the `provideTapeStore` hook: files, SQLite or
 * a plugin's), closed afterwards.
 * @throws BubError `config` when no plugin provides a store.
 */
export async function withTapeStore<T>(framework: BubFramework, body: (store: TapeStore) => Promise<T>): Promise<T> {
  return framework.running(async (scope) => {
    if (!scope.tapeStore) throw new BubError("config", "No tape store is configured: no plugin provides one — register the builtin plugin, or a plugin with provideTapeStore");
    return body(scope.tapeStore);
  });
}
