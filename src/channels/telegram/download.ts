import type { TelegramFetch } from "./client.ts";

/**
 * Downloads a file with `fetch` (the channel's, so a configured proxy applies). Returns
 * null when the file is larger than `maxBytes`: the download stops as soon as it is.
 *
 * @throws Error when the server answers with an error status or the connection fails.
 */
export async function downloadFile(url: string, options: { fetch: TelegramFetch; maxBytes: number }): Promise<Uint8Array | null> {
  const response = await options.fetch(url);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`file download failed with HTTP ${response.status}`);
  }
  if (Number(response.headers.get("content-length") ?? 0) > options.maxBytes) {
    await response.body?.cancel();
    return null;
  }
  if (!response.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    // Leaving the loop early cancels the rest of the body.
    if (size > options.maxBytes) return null;
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
