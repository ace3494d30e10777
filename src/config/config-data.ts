/** The data of a configuration: the parsed `config.yml` mapping, and merging such mappings. */

import { mergeConfig, type ConfigFile } from "../kernel/settings-contract.ts";

export type { ConfigFile };
export { mergeConfig };

/** A config file that does not exist or is empty. */
export function emptyConfigFile(path: string): ConfigFile {
  return { path, data: {}, lineOf: () => null };
}

