export type { Settings as SettingsStore } from "../config/settings.ts";
