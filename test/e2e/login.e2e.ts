/**
 * Signing in with a ChatGPT subscription and using it, on the installed package: `bub login
 * openai` against a fake OAuth server (manual and browser flows), then `bub run` through
 * the Codex provider against the fake OpenAI server's Codex endpoint, refreshing an
 * expired token first. No real browser is opened: `BROWSER` is a program that does nothing,
 * and the test plays the browser.
 */
import assert from "node:assert/strict";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { chatgptToken, startFakeCodexAuth, type FakeCodexAuth } from "../support/fake-codex-auth.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import type { ResponsesBody } from "../support/fake-openai-responses.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { startBub } from "./support/live.ts";
import { freePort } from "../support/ports.ts";

const ACCOUNT = "acct-e2e-42";

/** Every file under `dir`, as text. */
async function allText(dir: string): Promise<string> {
  let text = "";
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), "utf8");
  }
  return text;
}

describe("bub login openai and the Codex provider (installed package, fake servers)", () => {
  let auth: FakeCodexAuth;
  let codex: FakeOpenAI;
  before(async () => {
    await installedPackage();
    [auth, codex] = await Promise.all([startFakeCodexAuth({ accountId: ACCOUNT }), startFakeOpenAI()]);
  });
  after(async () => {
    await Promise.all([auth.close(), codex.close()]);
  });

  async function endpoints(home: string): Promise<Record<string, string>> {
    return {
      CODEX_HOME: join(home, "codex"),
      BUB_HOME: join(home, ".bub"),
      BUB_CODEX_AUTHORIZE_URL: auth.authorizeUrl,
      BUB_CODEX_TOKEN_URL: auth.tokenUrl,
      BUB_CODEX_BASE_URL: codex.url,
      BUB_CODEX_REDIRECT_URI: `http://localhost:${await freePort()}/auth/callback`,
      BROWSER: "true",
    };
  }

  it("--help lists login and logout", async () => {
    const home = await tempHome();
    try {
      const result = await runBub(["--help"], { home: home.path });
      assert.equal(result.code, 0);
      assert.match(result.stdout, /^\s+login\b/m);
      assert.match(result.stdout, /^\s+logout\b/m);
    } finally {
      await home.cleanup();
    }
  });

  it("manual login with the code typed on stdin, then bub run answers through Codex with a tool call", async () => {
    const home = await tempHome();
    try {
      const env = await endpoints(home.path);
      const login = await startBub(["login", "openai", "--manual", "--no-browser"], { home: home.path, env });
      try {
        const [url] = await login.waitForStdout(/http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\S+/);
        await login.waitForStdout(/Paste/);
        const callback = new URL((await fetch(url, { redirect: "manual" })).headers.get("location")!);
        login.child.stdin.end(`${callback.searchParams.get("code")}\n`);
        const result = await login.exited();
        const file = join(env.CODEX_HOME!, "auth.json");
        assert.equal(result.code, 0, result.stderr);
        assert.ok(result.stdout.endsWith(`login: ok\naccount_id: ${ACCOUNT}\nauth_file: ${file}\nusage: set BUB_MODEL=openai:<codex-model> and omit BUB_API_KEY\n`), result.stdout);
        assert.equal((await stat(file)).mode & 0o777, 0o600);
        const saved = JSON.parse(await readFile(file, "utf8"));
        assert.equal(saved.tokens.access_token, auth.issued.at(-1));
      } finally {
        login.kill();
      }

      const status = await runBub(["login", "status"], { home: home.path, env });
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, new RegExp(`^openai: signed in\\naccount_id: ${ACCOUNT}\\n`));

      await writeFile(join(home.path, "notes.txt"), "- water the plants\n");
      codex.requests.length = 0;
      codex.script(reply.toolCalls([{ id: "call_1", name: "fs_read", arguments: '{"path":"notes.txt"}' }]), reply.text("Water the plants."));
      const run = await runBub(["run", "what is in notes.txt?"], { home: home.path, env: { ...env, BUB_MODEL: "openai:gpt-5.1-codex" } });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "[cli:local]\nWater the plants.\n");
      const token = auth.issued.at(-1)!;
      assert.equal(codex.requests.length, 2);
      for (const request of codex.requests) {
        assert.equal(request.path, "/v1/codex/responses");
        assert.equal(request.headers.authorization, `Bearer ${token}`);
        assert.equal(request.headers["chatgpt-account-id"], ACCOUNT);
        assert.equal(request.headers.originator, "bub");
        assert.equal((request.body as unknown as ResponsesBody).store, false);
      }
      const second = codex.requests[1]!.body as unknown as ResponsesBody;
      const output = (second.input as { type?: string; output?: unknown }[]).find((item) => item.type === "function_call_output");
      assert.match(String(output?.output), /water the plants/);
      const stored = await allText(env.BUB_HOME!);
      assert.ok(stored.includes('"Water the plants."'), "the answer is on the tape");
      assert.ok(!stored.includes(token), "no token in the tapes or logs");
      assert.ok(!run.stderr.includes(token));

      const logout = await runBub(["logout", "openai"], { home: home.path, env });
      assert.equal(logout.stdout, `logout: ok\nauth_file: ${join(env.CODEX_HOME!, "auth.json")}\n`);
      assert.equal((await runBub(["login", "status"], { home: home.path, env })).code, 1);
    } finally {
      await home.cleanup();
    }
  });

  it("an expired token is refreshed before the call and saved", async () => {
    const home = await tempHome();
    try {
      const env = await endpoints(home.path);
      const expired = chatgptToken(ACCOUNT, Math.floor(Date.now() / 1000) - 60);
      auth.acceptRefreshToken("rt-e2e-old");
      const file = join(env.CODEX_HOME!, "auth.json");
      await runBub(["logout", "openai"], { home: home.path, env }); // creates nothing
      await import("node:fs/promises").then(({ mkdir }) => mkdir(env.CODEX_HOME!, { recursive: true }));
      await writeFile(file, JSON.stringify({ OPENAI_API_KEY: null, tokens: { access_token: expired, refresh_token: "rt-e2e-old", account_id: ACCOUNT }, last_refresh: "2020-01-01T00:00:00Z" }));
      codex.requests.length = 0;
      codex.script(reply.text("Hello from Codex."));
      const run = await runBub(["run", "hello"], { home: home.path, env: { ...env, BUB_MODEL: "openai:gpt-5.1-codex" } });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "[cli:local]\nHello from Codex.\n");
      const fresh = auth.issued.at(-1)!;
      assert.equal(codex.requests[0]!.headers.authorization, `Bearer ${fresh}`);
      const saved = JSON.parse(await readFile(file, "utf8"));
      assert.equal(saved.tokens.access_token, fresh);
      assert.equal(saved.OPENAI_API_KEY, null, "other keys are kept");
      assert.equal((await stat(file)).mode & 0o777, 0o600);
    } finally {
      await home.cleanup();
    }
  });

  it("browser login: the test plays the browser, following the authorize redirect to the local callback", async () => {
    const home = await tempHome();
    try {
      const env = await endpoints(home.path);
      const login = await startBub(["login", "openai", "--timeout", "20"], { home: home.path, env });
      try {
        const [url] = await login.waitForStdout(/http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\S+/);
        const page = await fetch(url);
        assert.equal(page.status, 200);
        assert.match(await page.text(), /Signed in/);
        const result = await login.exited();
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, new RegExp(`login: ok\\naccount_id: ${ACCOUNT}\\n`));
      } finally {
        login.kill();
      }
    } finally {
      await home.cleanup();
    }
  });

  it("a state mismatch fails (exit 1) and an unknown provider is a usage error (exit 2)", async () => {
    const home = await tempHome();
    try {
      const env = await endpoints(home.path);
      const login = await startBub(["login", "openai", "--manual"], { home: home.path, env });
      try {
        const [url] = await login.waitForStdout(/http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\S+/);
        await login.waitForStdout(/Paste/);
        const callback = new URL((await fetch(url, { redirect: "manual" })).headers.get("location")!);
        callback.searchParams.set("state", "f".repeat(32));
        login.child.stdin.end(`${callback}\n`);
        const result = await login.exited();
        assert.equal(result.code, 1);
        assert.match(result.stderr, /^bub: Codex login failed: .*state mismatch/m);
      } finally {
        login.kill();
      }
      const github = await runBub(["login", "github"], { home: home.path, env });
      assert.equal(github.code, 2, github.stderr);
      assert.match(github.stderr, /^bub: .*github/);
    } finally {
      await home.cleanup();
    }
  });
});
