/** The tape store the `bub tape` commands read: the one a turn would write to, seen with the current secrets hidden. */
import { BubError } from "../../kernel/errors.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import type { TapeStore } from "../../kernel/tape-contract.ts";
import { redactSecrets } from "../../config/redaction.ts";
import { rememberSettingsSecrets } from "../../config/secrets.ts";
import { redactedTapeStore } from "../../tape/redacted-store.ts";

/**
 * Runs `body` with the configured tape store (the `provideTapeStore` hook: files, SQLite or
 * a plugin's), closed afterwards. `body` reads it through {@link redactedTapeStore} with the
 * secrets the settings know now: a tape written before a key was configured as a secret
 * shows `[redacted:<setting>]` where the key was.
 * @throws BubError `config` when no plugin provides a store.
 */
export async function withTapeStore<T>(framework: BubFramework, body: (store: TapeStore) => Promise<T>): Promise<T> {
  await framework.settings.prepare();
  rememberSettingsSecrets(framework.settings);
  return framework.running(async (scope) => {
    if (!scope.tapeStore) throw new BubError("config", "No tape store is configured: no plugin provides one — register the builtin plugin, or a plugin with provideTapeStore");
    return body(redactedTapeStore(scope.tapeStore, (text) => redactSecrets(text)));
  });
}
