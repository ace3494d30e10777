import { defineSettings, type SettingsOf } from "../config/settings.ts";
import type { approvalSchema } from "./schema.ts";

/** Resolved approval settings. */
export type ApprovalSettings = SettingsOf<typeof approvalSchema>;

/** The approval settings (YAML root `approval`, `approval_timeout_seconds`; env `BUB_APPROVAL*`); zod loads when first resolved. */
export const approvalSettings = defineSettings<typeof approvalSchema>({
  id: "approval",
  section: null,
  schema: async () => (await import("./schema.ts")).approvalSchema,
});

/**
 * Whether `approval` is set at all (`BUB_APPROVAL`, else `approval:` in config.yml): only
 * then are the settings resolved at start-up, so the default (`off`) costs nothing.
 */
export function approvalIsSet(env: NodeJS.ProcessEnv, fileData: Record<string, unknown>): boolean {
  return env.BUB_APPROVAL !== undefined || fileData.approval !== undefined;
}
