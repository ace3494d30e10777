import { z } from "zod";
import { durationSeconds } from "../config/duration.ts";

/**
 * Approval settings (YAML root; env `BUB_APPROVAL`, `BUB_APPROVAL_TIMEOUT_SECONDS`).
 * ./settings.ts imports this module only when the settings are first resolved.
 */
export const approvalSchema = z.object({
  /** `ask`: `bash` and file writes outside the workspace wait for the user's yes; `off`: nothing is asked. */
  approval: z.enum(["off", "ask"]).default("off"),
  /** How long a question waits for an answer; no answer is a no. */
  approval_timeout_seconds: durationSeconds().default(300),
});
