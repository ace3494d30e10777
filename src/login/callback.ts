/**
 * How the authorization code comes back from the browser: a one-shot HTTP server on the
 * redirect URI's loopback port, or text the user pastes (the callback URL or the code).
 */
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";

/** A failed sign-in, worded for `Codex login failed: <message>`. */
export class LoginError extends Error {
  override readonly name = "LoginError";
}

/** The code and state in pasted text: a callback URL (query or fragment), `code=...&state=...`, or the bare code. */
export function parseCallbackInput(input: string): { code: string | null; state: string | null } {
  const text = input.trim();
  if (text === "") return { code: null, state: null };
  let params: URLSearchParams | null = null;
  if (/^https?:\/\//i.test(text)) {
    try {
      const url = new URL(text);
      params = url.searchParams.has("code") || !url.hash ? url.searchParams : new URLSearchParams(url.hash.slice(1));
    } catch {
      params = null;
    }
  }
  if (!params && text.includes("code=")) params = new URLSearchParams(text.slice(Math.max(text.indexOf("?"), text.indexOf("#")) + 1));
  if (!params) return { code: text, state: null };
  const code = params.get("code");
  return { code: code && code !== "" ? code : null, state: params.get("state") };
}

/**
 * The code of a callback, after checking it: a refused sign-in (`error=`), a state that is
 * not `expected`, or a missing code fail.
 *
 * @throws LoginError
 */
export function checkCallback(params: { code: string | null; state: string | null; error?: string | null }, expected: string): string {
  if (params.error) throw new LoginError(`the sign-in was refused (${params.error})`);
  if (params.state !== null && params.state !== expected) throw new LoginError("the state in the callback does not match this sign-in (state mismatch)");
  if (!params.code) throw new LoginError("the callback has no authorization code");
  return params.code;
}

const LOOPBACK = new Map([
  ["localhost", "127.0.0.1"],
  ["127.0.0.1", "127.0.0.1"],
  ["[::1]", "::1"],
]);

const DONE_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>bub: signed in</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>Signed in</h1><p>bub has your ChatGPT sign-in. You can close this tab and go back to the terminal.</p></body></html>
`;

/** A callback server waiting for the browser. */
export interface CallbackServer {
  /** Resolves with the checked code; rejects with a {@link LoginError}. */
  readonly code: Promise<string>;
  /** Stops listening (idempotent). */
  close(): Promise<void>;
}

/**
 * Listens on the redirect URI's loopback address and port. The first request to its path
 * settles {@link CallbackServer.code} and gets a small page saying how it went; other paths
 * get a 404 and the server keeps waiting.
 *
 * @throws LoginError when the redirect URI is not a loopback http URL or its port is taken.
 */
export async function startCallbackServer(redirectUri: string, expectedState: string): Promise<CallbackServer> {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    throw new LoginError(`the redirect URI '${redirectUri}' is not a URL`);
  }
  const host = LOOPBACK.get(url.hostname);
  if (url.protocol !== "http:" || !host) throw new LoginError(`the redirect URI ${redirectUri} must be an http URL on localhost, 127.0.0.1 or [::1]`);
  const port = Number(url.port || 80);
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  code.catch(() => undefined);
  const sockets = new Set<Socket>();
  let settled = false;
  const server: Server = createServer((request, response) => {
    const got = new URL(request.url ?? "/", "http://callback.invalid");
    if (got.pathname !== url.pathname || settled) {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found\n");
      return;
    }
    settled = true;
    try {
      const value = checkCallback({ code: got.searchParams.get("code"), state: got.searchParams.get("state"), error: got.searchParams.get("error_description") ?? got.searchParams.get("error") }, expectedState);
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", connection: "close" }).end(DONE_PAGE);
      settle.resolve(value);
    } catch (error) {
      response.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(`Sign-in failed: ${error instanceof Error ? error.message : String(error)}\n`);
      settle.reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(new LoginError(error.code === "EADDRINUSE" ? `port ${port} is in use (is another sign-in running?); use --manual to paste the callback instead` : `cannot listen on ${host}:${port} (${error.message})`));
    });
    server.listen(port, host, () => resolve());
  });
  let closing: Promise<void> | null = null;
  return {
    code,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Let the success page reach the browser before the connection goes.
        setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, 200).unref();
      });
      return closing;
    },
  };
}
