import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { withCodexDefaults, type CodexSettings } from "../../src/llm/codex/settings.ts";
import { browserCommand } from "../../src/login/browser.ts";
import { checkCallback, parseCallbackInput } from "../../src/login/callback.ts";
import { printLoginStatus, runLogin, runLogout } from "../../src/login/commands.ts";
import { startFakeCodexAuth, type FakeCodexAuth } from "../support/fake-codex-auth.ts";
import { tempDir } from "../support/temp.ts";
import { freePort } from "../support/ports.ts";

function sink(): { write(text: string): boolean; text: string } {
  return {
    text: "",
    write(text: string) {
      this.text += text;
      return true;
    },
  };
}

describe("pasted callbacks", () => {
  it("reads the code and state from a callback URL, a fragment, a query string or the bare code", () => {
    assert.deepEqual(parseCallbackInput("http://localhost:1455/auth/callback?code=abc&state=s1\n"), { code: "abc", state: "s1" });
    assert.deepEqual(parseCallbackInput("http://localhost:1455/auth/callback#code=abc&state=s1"), { code: "abc", state: "s1" });
    assert.deepEqual(parseCallbackInput("code=abc&state=s1"), { code: "abc", state: "s1" });
    assert.deepEqual(parseCallbackInput("  abc  "), { code: "abc", state: null });
    assert.deepEqual(parseCallbackInput(""), { code: null, state: null });
  });

  it("refuses a state mismatch, a missing code and a refused sign-in", () => {
    assert.equal(checkCallback({ code: "abc", state: "s1" }, "s1"), "abc");
    assert.equal(checkCallback({ code: "abc", state: null }, "s1"), "abc");
    assert.throws(() => checkCallback({ code: "abc", state: "other" }, "s1"), /state mismatch/);
    assert.throws(() => checkCallback({ code: null, state: "s1" }, "s1"), /no authorization code/);
    assert.throws(() => checkCallback({ code: null, state: "s1", error: "access_denied" }, "s1"), /refused \(access_denied\)/);
  });

  it("opens the browser with $BROWSER when it is set, else the platform's opener", () => {
    assert.deepEqual(browserCommand("http://x/", { BROWSER: "firefox --new-tab" }, "linux"), ["firefox", ["--new-tab", "http://x/"]]);
    assert.deepEqual(browserCommand("http://x/", {}, "darwin"), ["open", ["http://x/"]]);
    assert.deepEqual(browserCommand("http://x/", {}, "linux"), ["xdg-open", ["http://x/"]]);
  });
});

describe("bub login openai (fake OAuth server)", () => {
  let auth: FakeCodexAuth;
  before(async () => {
    auth = await startFakeCodexAuth({ accountId: "acct-login" });
  });
  after(() => auth.close());

  async function settingsIn(home: string): Promise<CodexSettings> {
    return withCodexDefaults({ home, authorize_url: auth.authorizeUrl, token_url: auth.tokenUrl, redirect_uri: `http://localhost:${await freePort()}/auth/callback` });
  }

  it("browser flow: the browser is sent back to the local callback, and the tokens land in auth.json (0600)", async () => {
    const dir = await tempDir();
    try {
      const settings = await settingsIn(dir.path);
      const stdout = sink();
      const pages: string[] = [];
      // Plays the browser: follows the authorize redirect to the callback server.
      const openBrowser = async (url: string) => {
        void fetch(url).then(async (response) => pages.push(`${response.status} ${await response.text()}`));
      };
      const code = await runLogin({ settings, env: {}, manual: false, browser: true, timeoutSeconds: 10, stdin: new PassThrough(), stdout, stderr: sink(), openBrowser });
      assert.equal(code, 0, stdout.text);
      const file = join(dir.path, "auth.json");
      assert.ok(stdout.text.endsWith(`login: ok\naccount_id: acct-login\nauth_file: ${file}\nusage: set BUB_MODEL=openai:<codex-model> and omit BUB_API_KEY\n`), stdout.text);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      const saved = JSON.parse(await readFile(file, "utf8"));
      assert.equal(saved.tokens.access_token, auth.issued.at(-1));
      assert.equal(saved.tokens.account_id, "acct-login");
      assert.ok(!stdout.text.includes(saved.tokens.access_token) && !stdout.text.includes(saved.tokens.refresh_token), "no token is printed");
      for (let wait = 0; pages.length === 0 && wait < 50; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.match(pages[0] ?? "", /^200 .*Signed in/s);

      const status = sink();
      assert.equal(await printLoginStatus(settings, {}, status), 0);
      assert.match(status.text, /^openai: signed in\naccount_id: acct-login\nexpires_at: .+Z\nauth_file: /);
      const out = sink();
      assert.equal(await runLogout(settings, {}, out), 0);
      assert.equal(out.text, `logout: ok\nauth_file: ${file}\n`);
      assert.equal(await printLoginStatus(settings, {}, sink()), 1);
    } finally {
      await dir.cleanup();
    }
  });

  it("browser flow times out when the browser never comes back", async () => {
    const dir = await tempDir();
    try {
      const stderr = sink();
      const code = await runLogin({ settings: await settingsIn(dir.path), env: {}, manual: false, browser: true, timeoutSeconds: 0.2, stdin: new PassThrough(), stdout: sink(), stderr, openBrowser: async () => undefined });
      assert.equal(code, 1);
      assert.match(stderr.text, /^bub: Codex login failed: no sign-in within 0.2 s \(raise --timeout\) — run `bub login openai` again \(or with --manual\)\n$/);
    } finally {
      await dir.cleanup();
    }
  });

  it("manual flow: the pasted callback URL signs in; a state mismatch fails", async () => {
    const dir = await tempDir();
    try {
      const settings = await settingsIn(dir.path);
      for (const tamper of [false, true]) {
        const stdin = new PassThrough();
        const stdout = sink();
        const stderr = sink();
        const pending = runLogin({ settings, env: {}, manual: true, browser: true, timeoutSeconds: 10, stdin, stdout, stderr });
        for (let wait = 0; !stdout.text.includes("Paste") && wait < 100; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
        const url = /https?:\/\/\S+\/oauth\/authorize\S+/.exec(stdout.text)![0];
        const callback = new URL((await fetch(url, { redirect: "manual" })).headers.get("location")!);
        if (tamper) callback.searchParams.set("state", "0".repeat(32));
        stdin.write(`${callback}\n`);
        const code = await pending;
        if (tamper) {
          assert.equal(code, 1);
          assert.match(stderr.text, /^bub: Codex login failed: .*state mismatch.* — run `bub login openai` again\n$/);
        } else {
          assert.equal(code, 0, stderr.text);
          assert.match(stdout.text, /login: ok\naccount_id: acct-login\n/);
        }
      }
    } finally {
      await dir.cleanup();
    }
  });
});
