/**
 * The OpenTelemetry side of tracing: a tracer provider owned by one framework (never
 * registered process-wide), a batch span processor and the OTLP/HTTP exporter the
 * settings name. Imported lazily by the tracing plugin, on a framework's first turn.
 */
import type { Tracer } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { TracingSettings } from "./settings.ts";

/** A framework's tracer and how to flush and close it. */
export interface TracerHandle {
  readonly tracer: Tracer;
  /** Sends every ended span now. */
  flush(): Promise<void>;
  /** Flushes and closes the exporter; later spans are dropped. Safe to call twice. */
  shutdown(): Promise<void>;
}

/** Options of {@link createTracer}. */
export interface TracerOptions {
  /** `service.version`. */
  readonly version?: string;
  /** Replaces the OTLP exporter (tests and benchmarks). */
  readonly exporter?: SpanExporter;
}

/** The OTLP/HTTP exporter for the settings' protocol, URL and headers. */
async function otlpExporter(settings: TracingSettings): Promise<SpanExporter> {
  const config = { url: settings.url, headers: { ...settings.headers }, timeoutMillis: settings.timeoutMs };
  if (settings.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter(config);
}

/**
 * A tracer provider with the settings' resource (`service.name`, `service.version`, the
 * `OTEL_RESOURCE_ATTRIBUTES`) exporting in batches.
 *
 * ```ts
 * const handle = await createTracer(settings, { version: "0.1.0" });
 * handle.tracer.startSpan("work").end();
 * await handle.shutdown();
 * ```
 */
export async function createTracer(settings: TracingSettings, options: TracerOptions = {}): Promise<TracerHandle> {
  const exporter = options.exporter ?? (await otlpExporter(settings));
  const resource = resourceFromAttributes({
    ...settings.resourceAttributes,
    [ATTR_SERVICE_NAME]: settings.serviceName,
    ...(options.version ? { [ATTR_SERVICE_VERSION]: options.version } : {}),
  });
  const provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter, exportTimeoutMillis: settings.timeoutMs })] });
  let closed: Promise<void> | null = null;
  return {
    tracer: provider.getTracer("bub", options.version),
    flush: () => (closed ? closed : provider.forceFlush()),
    shutdown: () => (closed ??= provider.shutdown()),
  };
}
