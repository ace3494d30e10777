/**
 * Validation of ATIF trajectories and of the CloudEvents that carry their steps, for the
 * export tests: the JSON Schema in test/fixtures/atif (written from Harbor's published v1.4
 * specification, source noted in the file) checked with Ajv, plus the two rules of Harbor's
 * validators that a schema cannot state; CloudEvents checked by the CloudEvents SDK.
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { default as formats } from "ajv-formats";
import { CloudEvent } from "cloudevents";

const schema: unknown = JSON.parse(readFileSync(new URL("../fixtures/atif/atif-v1.4.schema.json", import.meta.url), "utf8"));
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
// ajv-formats is CommonJS: under Node's ESM loader its plugin is the default export's `default`.
formats.default(ajv);
const validate = ajv.compile(schema as object);

type Json = Record<string, unknown>;

/** The problems of `trajectory` as ATIF v1.4 (empty when it is valid). */
export function atifProblems(trajectory: unknown): string[] {
  const problems: string[] = [];
  if (!validate(trajectory)) problems.push(...(validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""} ${JSON.stringify(error.params)}`));
  const steps = (trajectory as { steps?: Json[] }).steps ?? [];
  steps.forEach((step, index) => {
    if (step.step_id !== index + 1) problems.push(`/steps/${index}/step_id is ${String(step.step_id)}, expected ${index + 1}`);
    const ids = new Set(((step.tool_calls as Json[] | undefined) ?? []).map((call) => call.tool_call_id));
    for (const result of ((step.observation as { results?: Json[] } | undefined)?.results ?? [])) {
      if (result.source_call_id != null && !ids.has(result.source_call_id)) problems.push(`/steps/${index} observation names ${String(result.source_call_id)}, not a tool call of the step`);
    }
  });
  return problems;
}

/** Throws when `event` is not a valid CloudEvent (the SDK's strict validation); returns it as the SDK reads it. */
export function checkCloudEvent(event: Json): CloudEvent<unknown> {
  return new CloudEvent(event, true);
}
