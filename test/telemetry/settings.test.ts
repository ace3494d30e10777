// Which OTEL_* environments turn tracing on, where spans go, and the one-line errors for
// values bub cannot use.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { tracingSettings } from "../../src/telemetry/settings.ts";

describe("tracingSettings", () => {
  it("is off without an endpoint, with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none", () => {
    assert.equal(tracingSettings({}), null);
    assert.equal(tracingSettings({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }), null);
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "TRUE" }), null);
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "none" }), null);
  });

  it("appends v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT; the traces endpoint is used as it is and wins", () => {
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })?.url, "http://collector:4318/v1/traces");
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example/prefix/" })?.url, "https://otel.example/prefix/v1/traces");
    assert.equal(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:9999/custom" })?.url,
      "http://other:9999/custom",
    );
  });

  it("reads the protocol (http/protobuf by default), headers, service name, resource attributes and the two flags", () => {
    const settings = tracingSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-team=ops",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=agents",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=from-resource",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      BUB_TRACE_HOOKS: "true",
    });
    assert.deepEqual(settings, {
      url: "http://127.0.0.1:4318/v1/traces",
      protocol: "http/protobuf",
      timeoutMs: 3000,
      headers: { authorization: "Bearer abc", "x-team": "agents" },
      serviceName: "from-resource",
      resourceAttributes: { "deployment.environment": "prod", "service.name": "from-resource" },
      captureContent: true,
      traceHooks: true,
    });
    const json = tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "gateway-eu" });
    assert.deepEqual([json?.protocol, json?.serviceName, json?.captureContent, json?.traceHooks], ["http/json", "gateway-eu", false, false]);
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318" })?.serviceName, "bub");
    assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://h:4318", OTEL_EXPORTER_OTLP_TIMEOUT: "500" })?.timeoutMs, 500);
  });

  it("fails with a config error saying what to use for gRPC, a bad URL, another exporter or a malformed header", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    assert.throws(() => tracingSettings({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }), /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported — use http\/protobuf/);
    assert.throws(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }), /is not (a|an http\(s\)) URL/);
    assert.throws(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }), /is not a URL — set it/);
    assert.throws(() => tracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: "console" }), /OTEL_TRACES_EXPORTER=console is not supported — use otlp/);
    assert.throws(() => tracingSettings({ ...endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "soon" }), /OTEL_EXPORTER_OTLP_TIMEOUT=soon is not a positive number of milliseconds/);
    assert.throws(() => tracingSettings({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: "novalue" }), /OTEL_EXPORTER_OTLP_HEADERS has an entry without a name/);
  });
});
