/**
 * A fake of OpenAI's Codex OAuth server on 127.0.0.1 for tests:
 *
 * - `GET /oauth/authorize` checks the client id, the S256 challenge and the state, then
 *   redirects (302) to the `redirect_uri` with a fresh `code` and the `state`;
 * - `POST /oauth/token` (form-encoded) trades a code for tokens when the PKCE verifier
 *   hashes to that code's challenge and the redirect URI matches, and a refresh token for
 *   new tokens. Access tokens are JWTs carrying the ChatGPT account claim; each grant
 *   issues new ones, valid for `ttlSeconds` (0 or less: already expired).
 *
 * Every request is recorded (form bodies parsed).
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request the fake received. */
export interface AuthRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  form: Record<string, string>;
}

/** A running fake OAuth server. */
export interface FakeCodexAuth {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly accountId: string;
  readonly requests: AuthRequest[];
  /** Access tokens issued, in order. */
  readonly issued: string[];
  /** Lifetime of the next tokens issued (seconds). */
  ttlSeconds: number;
  /** When set, the token endpoint answers this HTTP status with an OAuth error. */
  failToken: number | null;
  /** Makes the token endpoint accept `token` as a refresh token (for an auth.json a test writes itself). */
  acceptRefreshToken(token: string): void;
  close(): Promise<void>;
}

/** An unsigned JWT (`alg: none`) with `claims`. */
export function fakeJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.${randomBytes(8).toString("base64url")}`;
}

/** A ChatGPT access token for `accountId` expiring at `exp` (seconds). */
export function chatgptToken(accountId: string, exp: number): string {
  return fakeJwt({ exp, "https://api.openai.com/auth": { chatgpt_account_id: accountId }, jti: randomBytes(6).toString("hex") });
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function readText(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the fake on a random port of 127.0.0.1. */
export async function startFakeCodexAuth(options: { clientId?: string; accountId?: string; ttlSeconds?: number } = {}): Promise<FakeCodexAuth> {
  const clientId = options.clientId ?? "app_EMoamEEZ73f0CkXaXp7hrann";
  const accountId = options.accountId ?? "acct-fake-123";
  const codes = new Map<string, { challenge: string; redirectUri: string }>();
  const refreshTokens = new Set<string>();
  const sockets = new Set<Socket>();

  const fake = {
    origin: "",
    authorizeUrl: "",
    tokenUrl: "",
    clientId,
    accountId,
    requests: [] as AuthRequest[],
    issued: [] as string[],
    ttlSeconds: options.ttlSeconds ?? 3600,
    failToken: null as number | null,
    acceptRefreshToken: (token: string) => void refreshTokens.add(token),
    close: async (): Promise<void> => undefined,
  };

  function tokens(): Record<string, unknown> {
    const access = chatgptToken(accountId, Math.floor(Date.now() / 1000) + fake.ttlSeconds);
    const refresh = `rt-${randomBytes(12).toString("hex")}`;
    refreshTokens.add(refresh);
    fake.issued.push(access);
    return { access_token: access, refresh_token: refresh, id_token: fakeJwt({ email: "ada@example.com" }), expires_in: fake.ttlSeconds, token_type: "Bearer" };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://fake.invalid");
    const text = request.method === "POST" ? await readText(request) : "";
    const form = Object.fromEntries(new URLSearchParams(text));
    const query = Object.fromEntries(url.searchParams);
    fake.requests.push({ method: request.method ?? "GET", path: url.pathname, query, form });
    if (request.method === "GET" && url.pathname === "/oauth/authorize") {
      const problems = [
        query.client_id !== clientId && "unknown client_id",
        query.response_type !== "code" && "response_type must be code",
        query.code_challenge_method !== "S256" && "code_challenge_method must be S256",
        !query.code_challenge && "missing code_challenge",
        !/^[0-9a-f]{32}$/.test(query.state ?? "") && "state must be 16 random bytes in hex",
        !query.redirect_uri && "missing redirect_uri",
      ].filter(Boolean);
      if (problems.length > 0) return json(response, 400, { error: "invalid_request", error_description: problems.join("; ") });
      const code = `code-${randomBytes(8).toString("hex")}`;
      codes.set(code, { challenge: query.code_challenge!, redirectUri: query.redirect_uri! });
      const target = new URL(query.redirect_uri!);
      target.searchParams.set("code", code);
      target.searchParams.set("state", query.state!);
      response.writeHead(302, { location: target.toString() }).end();
      return;
    }
    if (request.method === "POST" && url.pathname === "/oauth/token") {
      if (fake.failToken !== null) return json(response, fake.failToken, { error: "invalid_grant", error_description: "the fake was told to refuse" });
      if (form.client_id !== clientId) return json(response, 401, { error: "invalid_client", error_description: "unknown client_id" });
      if (form.grant_type === "authorization_code") {
        const pending = codes.get(form.code ?? "");
        if (!pending) return json(response, 400, { error: "invalid_grant", error_description: "unknown or used code" });
        codes.delete(form.code!);
        const hashed = createHash("sha256").update(form.code_verifier ?? "").digest("base64url");
        if (hashed !== pending.challenge) return json(response, 400, { error: "invalid_grant", error_description: "code_verifier does not match the challenge" });
        if (form.redirect_uri !== pending.redirectUri) return json(response, 400, { error: "invalid_grant", error_description: "redirect_uri differs" });
        return json(response, 200, tokens());
      }
      if (form.grant_type === "refresh_token") {
        if (!refreshTokens.delete(form.refresh_token ?? "")) return json(response, 400, { error: "invalid_grant", error_description: "unknown refresh token" });
        return json(response, 200, tokens());
      }
      return json(response, 400, { error: "unsupported_grant_type" });
    }
    json(response, 404, { error: "not_found" });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => json(response, 500, { error: String(error) }));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  fake.origin = `http://127.0.0.1:${port}`;
  fake.authorizeUrl = `${fake.origin}/oauth/authorize`;
  fake.tokenUrl = `${fake.origin}/oauth/token`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return fake;
}
