import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { agentSettings, channelSettings, spillSettings } from "../../src/builtin/settings.ts";
import { telegramSettings } from "../../src/channels/telegram/settings.ts";
import { readConfigFile } from "../../src/config/config-file.ts";
import { Settings } from "../../src/config/settings.ts";
import { tempDir } from "../support/temp.ts";

/** A settings store over a written `config.yml`, with the sections `bub` registers. */
export interface ConfiguredSettings {
  readonly settings: Settings;
  /** Path of the `config.yml` the store reads. */
  readonly configFile: string;
}

/**
 * Writes `yaml` as `config.yml` in a temporary directory and runs `body` with a store that
 * reads it and `env`, the builtin sections registered in the builtin plugin's order.
 */
export async function withConfig(yaml: string, env: NodeJS.ProcessEnv, body: (config: ConfiguredSettings) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  try {
    const configFile = join(dir.path, "config.yml");
    await writeFile(configFile, yaml);
    const settings = new Settings(await readConfigFile(configFile), env);
    for (const section of [agentSettings, channelSettings, spillSettings, telegramSettings]) settings.register(section);
    await body({ settings, configFile });
  } finally {
    await dir.cleanup();
  }
}
