/**
 * A local OTLP/HTTP trace receiver on 127.0.0.1 for tests and benchmarks: accepts
 * `POST /v1/traces` in both encodings (`application/json` and `application/x-protobuf`),
 * keeps every raw body (so a test can check that a secret is in no byte sent), and decodes
 * the spans into one flat shape whatever the encoding.
 *
 * `@opentelemetry/otlp-transformer` ships serializers only (no request decoder, no .proto
 * files), so protobuf is decoded here from the wire format with the field numbers of
 * opentelemetry/proto/trace/v1/trace.proto.
 *
 * ```ts
 * const receiver = await startOtlpReceiver();
 * // OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url
 * const spans = await receiver.waitForSpans(3);
 * await receiver.close();
 * ```
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as received, either encoding. Ids are lowercase hex; `parentSpanId` is "" for a root. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
  scope: string;
}

/** One POST as it arrived. */
export interface ReceivedExport {
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  spans: ReceivedSpan[];
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string;
  readonly exports: ReceivedExport[];
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** Resolves once at least `count` spans arrived; rejects after `timeoutMs`. */
  waitForSpans(count: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

// ---- protobuf wire format ---------------------------------------------------------------

type Field = { field: number; wire: number; value: bigint | Buffer };

function fieldsOf(buffer: Buffer): Field[] {
  const fields: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buffer.length) throw new Error("truncated varint");
      const byte = buffer[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buffer.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) fields.push({ field, wire, value: varint() });
    else if (wire === 1) {
      fields.push({ field, wire, value: buffer.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      if (pos + length > buffer.length) throw new Error("truncated field");
      fields.push({ field, wire, value: buffer.subarray(pos, pos + length) });
      pos += length;
    } else if (wire === 5) {
      fields.push({ field, wire, value: buffer.subarray(pos, pos + 4) });
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return fields;
}

const bytes = (field: Field) => field.value as Buffer;
const str = (field: Field) => bytes(field).toString("utf8");

function anyValue(buffer: Buffer): unknown {
  for (const field of fieldsOf(buffer)) {
    switch (field.field) {
      case 1: return str(field);
      case 2: return field.value === 1n;
      case 3: return Number(BigInt.asIntN(64, field.value as bigint));
      case 4: return bytes(field).readDoubleLE(0);
      case 5: return fieldsOf(bytes(field)).filter((item) => item.field === 1).map((item) => anyValue(bytes(item)));
      case 6: return keyValues(fieldsOf(bytes(field)).filter((item) => item.field === 1));
      case 7: return bytes(field).toString("base64");
    }
  }
  return null;
}

function keyValues(fields: Field[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const parts = fieldsOf(bytes(field));
    const key = parts.find((part) => part.field === 1);
    const value = parts.find((part) => part.field === 2);
    if (key) out[str(key)] = value ? anyValue(bytes(value)) : null;
  }
  return out;
}

function protobufSpans(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of fieldsOf(body).filter((field) => field.field === 1)) {
    const parts = fieldsOf(bytes(resourceSpans));
    const resourceField = parts.find((part) => part.field === 1);
    const resource = resourceField ? keyValues(fieldsOf(bytes(resourceField)).filter((part) => part.field === 1)) : {};
    for (const scopeSpans of parts.filter((part) => part.field === 2)) {
      const scopeParts = fieldsOf(bytes(scopeSpans));
      const scopeField = scopeParts.find((part) => part.field === 1);
      const scopeName = scopeField ? fieldsOf(bytes(scopeField)).find((part) => part.field === 1) : undefined;
      for (const spanField of scopeParts.filter((part) => part.field === 2)) {
        const span: ReceivedSpan = { traceId: "", spanId: "", parentSpanId: "", name: "", kind: 0, startNanos: 0n, endNanos: 0n, attributes: {}, status: { code: 0, message: "" }, events: [], resource, scope: scopeName ? str(scopeName) : "" };
        const attributes: Field[] = [];
        for (const field of fieldsOf(bytes(spanField))) {
          if (field.field === 1) span.traceId = bytes(field).toString("hex");
          else if (field.field === 2) span.spanId = bytes(field).toString("hex");
          else if (field.field === 4) span.parentSpanId = bytes(field).toString("hex");
          else if (field.field === 5) span.name = str(field);
          else if (field.field === 6) span.kind = Number(field.value);
          else if (field.field === 7) span.startNanos = bytes(field).readBigUInt64LE(0);
          else if (field.field === 8) span.endNanos = bytes(field).readBigUInt64LE(0);
          else if (field.field === 9) attributes.push(field);
          else if (field.field === 11) {
            const event = fieldsOf(bytes(field));
            const name = event.find((part) => part.field === 2);
            span.events.push({ name: name ? str(name) : "", attributes: keyValues(event.filter((part) => part.field === 3)) });
          } else if (field.field === 15) {
            for (const part of fieldsOf(bytes(field))) {
              if (part.field === 2) span.status.message = str(part);
              if (part.field === 3) span.status.code = Number(part.value);
            }
          }
        }
        span.attributes = keyValues(attributes);
        spans.push(span);
      }
    }
  }
  return spans;
}

// ---- JSON ---------------------------------------------------------------------------------

type JsonAny = { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number; arrayValue?: { values?: JsonAny[] }; kvlistValue?: { values?: JsonKeyValue[] }; bytesValue?: string };
type JsonKeyValue = { key: string; value?: JsonAny };

function jsonAny(value: JsonAny | undefined): unknown {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonAny);
  if (value.kvlistValue !== undefined) return jsonKeyValues(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return null;
}

function jsonKeyValues(values: JsonKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((values ?? []).map((entry) => [entry.key, jsonAny(entry.value)]));
}

/** Hex for an id the JSON encoder wrote as hex (the OTLP/JSON rule) or, by mistake, as base64. */
function hexId(id: string | undefined, length: number): string {
  if (!id) return "";
  return /^[0-9a-f]+$/i.test(id) && id.length === length ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");
}

function jsonSpans(body: Buffer): ReceivedSpan[] {
  const data = JSON.parse(body.toString("utf8")) as { resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: Record<string, unknown>[] }[] }[] };
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of data.resourceSpans ?? []) {
    const resource = jsonKeyValues(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        const status = (span.status ?? {}) as { code?: number; message?: string };
        spans.push({
          traceId: hexId(span.traceId as string, 32),
          spanId: hexId(span.spanId as string, 16),
          parentSpanId: hexId(span.parentSpanId as string | undefined, 16),
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          startNanos: BigInt(String(span.startTimeUnixNano ?? 0)),
          endNanos: BigInt(String(span.endTimeUnixNano ?? 0)),
          attributes: jsonKeyValues(span.attributes as JsonKeyValue[]),
          status: { code: Number(status.code ?? 0), message: status.message ?? "" },
          events: ((span.events ?? []) as { name: string; attributes?: JsonKeyValue[] }[]).map((event) => ({ name: event.name, attributes: jsonKeyValues(event.attributes) })),
          resource,
          scope: scopeSpans.scope?.name ?? "",
        });
      }
    }
  }
  return spans;
}

// ---- the server ---------------------------------------------------------------------------

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts a receiver on 127.0.0.1 (a free port). A body it cannot decode is answered 400 and recorded with no spans. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const waiters = new Set<() => void>();
  const all = () => exports.flatMap((entry) => entry.spans);
  const server = createServer((request, response) => {
    void (async () => {
      const body = await bodyOf(request);
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      const contentType = String(request.headers["content-type"] ?? "").split(";")[0]!.trim();
      let spans: ReceivedSpan[] = [];
      let ok = true;
      try {
        if (contentType === "application/json") spans = jsonSpans(body);
        else if (contentType === "application/x-protobuf") spans = protobufSpans(body);
        else ok = false;
      } catch {
        ok = false;
      }
      exports.push({ contentType, headers: { ...request.headers }, body, spans });
      for (const wake of waiters) wake();
      if (!ok) response.writeHead(400).end();
      else if (contentType === "application/json") response.writeHead(200, { "content-type": "application/json" }).end("{}");
      else response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    })();
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    spans: all,
    waitForSpans(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (all().length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(all());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} spans, received ${all().length}: ${all().map((span) => span.name).join(", ")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
