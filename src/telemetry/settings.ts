/**
 * Whether and where traces go, read from the standard OpenTelemetry variables
 * (docs/observability.md). Nothing here loads OpenTelemetry: this module decides whether
 * the tracing plugin (and with it the SDK) is loaded at all.
 */
import { ConfigError } from "../config/config-error.ts";

/** The OTLP/HTTP encodings bub can send. */
export type OtlpProtocol = "http/protobuf" | "http/json";

/** Tracing as the environment configures it. */
export interface TracingSettings {
  /** Where spans are POSTed (the full `/v1/traces` URL). */
  readonly url: string;
  readonly protocol: OtlpProtocol;
  /** Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS`). */
  readonly headers: Readonly<Record<string, string>>;
  /** How long one export may take, retries included (`OTEL_EXPORTER_OTLP_TIMEOUT`, milliseconds). */
  readonly timeoutMs: number;
  /** `service.name` of the resource. */
  readonly serviceName: string;
  /** Other resource attributes (`OTEL_RESOURCE_ATTRIBUTES`). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** Record prompts, completions, tool arguments and results (redacted). */
  readonly captureContent: boolean;
  /** A child span per hook implementation call (`BUB_TRACE_HOOKS`). */
  readonly traceHooks: boolean;
}

function value(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === "" ? undefined : raw;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  return value(env, name)?.toLowerCase() === "true";
}

/** `k=v,k2=v2` with percent-encoded values, as the OTLP exporter specification writes headers and resource attributes. */
export function parseKeyValues(text: string | undefined, variable: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    if (at <= 0) throw new ConfigError(`${variable} has an entry without a name and "=" (${JSON.stringify(pair.trim().slice(0, 40))}) — write it as name=value,name2=value2`);
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${variable} has a badly percent-encoded entry — encode "," "=" and "%" in values as %2C %3D %25`);
    }
  }
  return out;
}

function checkedUrl(text: string, variable: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${variable}=${text} is not a URL — set it to the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`${variable}=${text} is not an http(s) URL — bub sends OTLP over HTTP; use the collector's HTTP port (4318), not gRPC`);
  }
  return url;
}

/** The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` plus `v1/traces`. */
function tracesUrl(env: NodeJS.ProcessEnv): string | null {
  const specific = value(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (specific) return checkedUrl(specific, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").href;
  const base = value(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (!base) return null;
  const url = checkedUrl(base, "OTEL_EXPORTER_OTLP_ENDPOINT");
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`;
  return url.href;
}

function protocolOf(env: NodeJS.ProcessEnv): OtlpProtocol {
  const variable = value(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = value(env, variable) ?? "http/protobuf";
  if (protocol === "http/protobuf" || protocol === "http/json") return protocol;
  throw new ConfigError(`${variable}=${protocol} is not supported — use http/protobuf (the default) or http/json`);
}

/**
 * bub's default export timeout. The specification's is 10 s; a shorter one keeps a command
 * from waiting long at exit for a collector that is down.
 */
export const DEFAULT_EXPORT_TIMEOUT_MS = 3000;

function timeoutOf(env: NodeJS.ProcessEnv): number {
  const variable = value(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT";
  const text = value(env, variable);
  if (text === undefined) return DEFAULT_EXPORT_TIMEOUT_MS;
  const ms = Number(text);
  if (!Number.isFinite(ms) || ms <= 0) throw new ConfigError(`${variable}=${text} is not a positive number of milliseconds — e.g. ${variable}=3000`);
  return ms;
}

/**
 * The tracing settings, or null when tracing is off: no OTLP endpoint variable is set,
 * `OTEL_SDK_DISABLED=true`, or `OTEL_TRACES_EXPORTER=none`.
 *
 * @throws ConfigError for a value bub cannot use (a bad URL, a gRPC protocol, an exporter other than `otlp`).
 */
export function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings | null {
  if (flag(env, "OTEL_SDK_DISABLED")) return null;
  const exporters = (value(env, "OTEL_TRACES_EXPORTER") ?? "otlp").split(",").map((name) => name.trim().toLowerCase()).filter(Boolean);
  if (exporters.includes("none")) return null;
  const unsupported = exporters.filter((name) => name !== "otlp");
  if (unsupported.length > 0) throw new ConfigError(`OTEL_TRACES_EXPORTER=${unsupported.join(",")} is not supported — use otlp (the default) or none`);
  const url = tracesUrl(env);
  if (url === null) return null;
  const resourceAttributes = parseKeyValues(value(env, "OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES");
  return {
    url,
    protocol: protocolOf(env),
    timeoutMs: timeoutOf(env),
    headers: {
      ...parseKeyValues(value(env, "OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS"),
      ...parseKeyValues(value(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"), "OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
    },
    serviceName: value(env, "OTEL_SERVICE_NAME") ?? resourceAttributes["service.name"] ?? "bub",
    resourceAttributes,
    captureContent: flag(env, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"),
    traceHooks: flag(env, "BUB_TRACE_HOOKS"),
  };
}
