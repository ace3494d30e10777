import type { Agent } from "node:http";

/**
 * Downloads a file (through `agent`, so a configured proxy applies). Returns null when the
 * file is larger than `maxBytes`: the download stops as soon as it is.
 *
 * @throws Error when the server answers with an error status or the connection fails.
 */
export function downloadFile(url: string, options: { agent?: Agent; maxBytes: number }): Promise<Uint8Array | null> {
  // Loaded on first use: node:http and node:https take ~20 ms to load, and every `bub` run
  // (even `bub --help`) imports this module through the builtin channel hooks.
  const request = url.startsWith("https:") ? process.getBuiltinModule("node:https").request : process.getBuiltinModule("node:http").request;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent: options.agent }, (response) => {
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        response.resume();
        reject(new Error(`file download failed with HTTP ${status}`));
        return;
      }
      if (Number(response.headers["content-length"] ?? 0) > options.maxBytes) {
        response.destroy();
        resolve(null);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > options.maxBytes) {
          response.destroy();
          resolve(null);
          return;
        }
        chunks.push(chunk);
      });
      response.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}
