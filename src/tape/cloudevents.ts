/**
 * A tape as CloudEvents (JSON format, CloudEvents 1.0): one event per ATIF step
 * (./atif.ts), the form the reference runtime's newer tapes take. Each event's `data` is
 * the step as it is; `subject` is the session, `time` the step's date, `id` unique per
 * tape and step, and the `atifversion` extension names the ATIF version of the data.
 */
import { ATIF_SCHEMA_VERSION, type AtifStep, type AtifTrajectory } from "./atif.ts";

/** The `type` of every event: one trajectory step. */
export const STEP_EVENT_TYPE = "bub.tape.step";

/** One CloudEvent of an exported tape. */
export interface TapeCloudEvent {
  specversion: "1.0";
  id: string;
  source: string;
  type: typeof STEP_EVENT_TYPE;
  subject: string;
  time?: string;
  datacontenttype: "application/json";
  atifversion: typeof ATIF_SCHEMA_VERSION;
  data: AtifStep;
}

/** The events of `trajectory`, in step order; `tape` names the source (`/bub/tapes/<tape>`). */
export function trajectoryEvents(trajectory: AtifTrajectory, tape: string): TapeCloudEvent[] {
  const source = `/bub/tapes/${encodeURIComponent(tape)}`;
  return trajectory.steps.map((step) => ({
    specversion: "1.0",
    id: `${tape}/${step.step_id}`,
    source,
    type: STEP_EVENT_TYPE,
    subject: trajectory.session_id,
    ...(step.timestamp ? { time: step.timestamp } : {}),
    datacontenttype: "application/json",
    atifversion: ATIF_SCHEMA_VERSION,
    data: step,
  }));
}
