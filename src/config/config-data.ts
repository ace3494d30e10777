/** The data of a configuration: the parsed `config.yml` mapping, and merging such mappings. */

import type { ConfigFile } from "../kernel/settings-contract.ts";
import { isRecord } from "../kernel/guards.ts";

export type { ConfigFile };

/** A config file that does not exist or is empty. */
export function emptyConfigFile(path: string): ConfigFile {
  return { path, data: {}, lineOf: () => null };
}

/** Deep-merges `updates` into `base` in place (incoming values win; nested objects merged). */
export function mergeConfig(base: Record<string, unknown>, ...updates: readonly (Record<string, unknown> | null | undefined)[]): Record<string, unknown> {
  for (const update of updates) {
    if (!update) continue;
    for (const [key, value] of Object.entries(update)) {
      const current = base[key];
      if (isRecord(value) && isRecord(current)) mergeConfig(current, value);
      else base[key] = isRecord(value) || Array.isArray(value) ? structuredClone(value) : value;
    }
  }
  return base;
}
