/**
 * The session's model as an ACP configuration option: a `model` select listing what the
 * plugins offer (`provideModelOptions`), which `session/set_config_option` switches with
 * the same check and tape event as `,model <id>`.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { BubFramework } from "../kernel/framework.ts";

/** The configuration option's id. */
export const MODEL_OPTION_ID = "model";

/**
 * The `model` select for a session, current value `current` (else the offered current
 * model, else the first); none when no plugin offers a model.
 */
export async function modelConfigOptions(framework: BubFramework, sessionId: string, current: string | null): Promise<acp.SessionConfigOption[]> {
  const offered = await framework.modelOptions(sessionId);
  if (offered.models.length === 0) return [];
  const options = offered.models.map((choice) => ({ value: choice.id, name: choice.name ?? choice.id, ...(choice.description ? { description: choice.description } : {}) }));
  const value = current ?? offered.currentModel ?? options[0]?.value ?? "";
  if (!options.some((option) => option.value === value)) options.unshift({ value, name: value });
  return [{ type: "select", id: MODEL_OPTION_ID, name: "Model", category: "model", currentValue: value, options }];
}
