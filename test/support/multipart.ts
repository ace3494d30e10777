/** multipart/form-data bodies as grammY uploads them, read by the fake Bot API (./fake-telegram.ts). */

/** A file the bot uploaded (multipart `attach://` part), as recorded in a call's payload. */
export interface FakeDocument {
  filename: string;
  /** The file's bytes decoded as UTF-8. */
  text: string;
  size: number;
}

/**
 * Parses a multipart/form-data body as grammY sends it: plain fields become strings, and a
 * field `attach://<id>` is replaced by the uploaded part `<id>` as a {@link FakeDocument}.
 */
export function parseMultipart(body: Buffer, boundary: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const files = new Map<string, FakeDocument>();
  const delimiter = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const partStart = start + delimiter.length;
    if (body.subarray(partStart, partStart + 2).toString() === "--") break;
    const next = body.indexOf(delimiter, partStart);
    if (next < 0) break;
    // Each part sits between "\r\n" after the delimiter and "\r\n" before the next one.
    const part = body.subarray(partStart + 2, next - 2);
    const headerEnd = part.indexOf("\r\n\r\n");
    const headers = part.subarray(0, headerEnd).toString("utf8");
    const content = part.subarray(headerEnd + 4);
    const name = /(?:^|[;:\s])name="([^"]*)"/i.exec(headers)?.[1];
    const filename = /filename="?([^";\r\n]*)"?/i.exec(headers)?.[1];
    if (name !== undefined) {
      if (filename === undefined) fields[name] = content.toString("utf8");
      else files.set(name, { filename, text: content.toString("utf8"), size: content.byteLength });
    }
    start = next;
  }
  for (const [key, value] of Object.entries(fields)) {
    const file = typeof value === "string" && value.startsWith("attach://") ? files.get(value.slice("attach://".length)) : undefined;
    if (file) fields[key] = file;
  }
  return fields;
}
