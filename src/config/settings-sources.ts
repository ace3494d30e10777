/**
 * Where a section's values come from, key by key: the environment (`BUB_*` variables and
 * the section's `fromEnv`) over `config.yml` (its `${NAME}` references expanded) over the
 * schema's defaults, which the schema itself applies.
 */
import { createLogger } from "../kernel/log.ts";
import { type ConfigFile } from "./config-data.ts";
import { isRecord } from "../kernel/guards.ts";
import { expandReferences, isWholeReference } from "./config-refs.ts";
import { parseEnvValue } from "./env-values.ts";
import { envVariable, type SettingsSchema, type SettingsSection } from "../kernel/settings-contract.ts";
import { shown, type Source } from "./settings-problems.ts";

const log = createLogger("bub:config");

/** Where {@link gatherValues} reads from. */
export interface ValueSources {
  readonly file: ConfigFile;
  readonly env: NodeJS.ProcessEnv;
  /** False: keep `${NAME}` references in the file's values as written. */
  readonly expand: boolean;
  /** False: a reference to an unset variable is not logged (a probe of data about to be written). */
  readonly warn?: boolean;
}

/** A section's values before validation, and where each key's value came from. */
export interface GatheredValues {
  readonly values: Record<string, unknown>;
  readonly sources: Map<string, Source>;
}

function fileSection(section: SettingsSection<unknown>, file: ConfigFile): Record<string, unknown> {
  if (section.section === null) return file.data;
  const data = file.data[section.section];
  return isRecord(data) ? data : {};
}

/** A value from the file with its `${NAME}` references replaced; undefined when one names an unset variable. */
function fromFile(value: unknown, field: unknown, path: readonly string[], from: ValueSources): unknown {
  if (value === undefined || !from.expand) return value;
  const { value: expanded, missing } = expandReferences(value, from.env);
  if (missing.length > 0 && from.warn !== false) {
    const line = from.file.lineOf(path);
    log.warn(
      `'${path.join(".")}' in ${from.file.path}${line ? ` line ${line}` : ""} refers to ${missing.map((name) => `\${${name}}`).join(", ")}, not set in the environment; ${expanded === undefined ? "the setting is ignored" : "the entries naming it are ignored"}. Set the variable or change the file.`,
    );
  }
  return isWholeReference(value) && typeof expanded === "string" ? parseEnvValue(expanded, field) : expanded;
}

/** Collects the values of every key of `schema` by precedence, environment strings converted by the key's type. */
export function gatherValues(section: SettingsSection<unknown>, schema: SettingsSchema, from: ValueSources): GatheredValues {
  const values: Record<string, unknown> = {};
  const sources = new Map<string, Source>();
  const prefixPath = section.section === null ? [] : [section.section];
  if (section.fromEnv) {
    for (const [key, value] of Object.entries(section.fromEnv(from.env))) {
      values[key] = value;
      sources.set(key, { kind: "env", variable: `${section.envPrefix}*`, raw: shown(value) });
    }
  }
  const inFile = fileSection(section, from.file);
  for (const key of Object.keys(schema.shape)) {
    const variable = envVariable(section, key);
    const raw = from.env[variable];
    const fileValue = raw === undefined ? fromFile(inFile[key], schema.shape[key], [...prefixPath, key], from) : inFile[key];
    if (fileValue !== undefined) {
      const current = values[key];
      values[key] = isRecord(current) && isRecord(fileValue) ? { ...current, ...fileValue } : fileValue;
      sources.set(key, { kind: "file", file: from.file.path, line: from.file.lineOf([...prefixPath, key]) });
    }
    if (raw !== undefined) {
      values[key] = parseEnvValue(raw, schema.shape[key]);
      sources.set(key, { kind: "env", variable, raw });
    }
  }
  return { values, sources };
}
