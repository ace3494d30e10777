/**
 * `bub chat` of the installed binary in a real terminal (a tmux pane), against the fake model
 * server on 127.0.0.1: what the screen shows while and after a turn runs, and Ctrl-C on an
 * empty prompt.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { hasTmux, tmuxServer } from "../support/tmux.ts";
import { cleanEnv, installedPackage, tempHome } from "./support/installed.ts";

// A tmux server of its own for each test: a new session on the socket of a server that is
// still shutting down fails with "server exited unexpectedly".
let server = tmuxServer(`bub-e2e-chat-${process.pid}-0`);
let servers = 0;
const tmux = (...args: string[]) => server.tmux(...args);
const waitForPane = (predicate: (screen: string) => boolean, what: string) => server.waitForPane(predicate, what);

describe("bub chat in a terminal (installed package, tmux)", { skip: hasTmux ? false : "tmux is not installed (apt-get install tmux)" }, () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    home = await tempHome();
    server = tmuxServer(`bub-e2e-chat-${process.pid}-${++servers}`);
  });
  afterEach(async () => {
    await tmux("kill-server").catch(() => {});
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  async function startChat(): Promise<void> {
    const { bin } = await installedPackage();
    const env = cleanEnv(home.path, { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: openai.url, TERM: "xterm-256color" });
    const exports = Object.entries(env).map(([key, value]) => `${key}='${value}'`).join(" ");
    await tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "40", "-c", home.path, `env -i ${exports} '${bin}' chat`);
    await tmux("set-option", "-t", "chat", "remain-on-exit", "on");
    await waitForPane((screen) => /^\S+ > ?$/m.test(screen), "the prompt");
  }

  it("shows seconds and tokens beside the spinner, renders headings and list code without markers, and leaves a blank line before the next prompt", async () => {
    openai.script(
      reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "echo checked" }) }], { usage: { prompt_tokens: 1200, completion_tokens: 34 } }),
      reply.text("## Plan\n\n- run `npm test` first\n- then ship\n\nAll **done**.", { delayMs: 2500 }),
    );
    await startChat();
    await tmux("send-keys", "-t", "chat", "plan it", "Enter");
    const spinning = await waitForPane((screen) => /Generating \([1-9]\d*s · 1,234 tokens\)/.test(screen), "the spinner with seconds and tokens");
    assert.match(spinning, /Generating \(\d+s · 1,234 tokens\)/);
    const answered = await waitForPane((screen) => screen.includes("All done.") && !screen.includes("Generating") && /All done\.\n\n\S+ > ?$/m.test(screen), "the answer, a blank line and the prompt");
    assert.match(answered, /^Plan$/m, "the heading without its ##");
    assert.doesNotMatch(answered, /##/);
    assert.match(answered, /run npm test first/, "inline code in a list item without its backticks");
    assert.doesNotMatch(answered, /`/);
    await tmux("send-keys", "-t", "chat", ",quit", "Enter");
    await waitForPane((screen) => screen.includes("Bye."), "the goodbye");
  });

  it("Ctrl-C on an empty prompt says how to quit, not 'Interrupted'; a second Ctrl-C quits", async () => {
    await startChat();
    await tmux("send-keys", "-t", "chat", "C-c");
    const hinted = await waitForPane((screen) => screen.includes("(press Ctrl-C again or Ctrl-D to quit, or type ,quit)"), "the quit hint");
    assert.doesNotMatch(hinted, /Interrupted/);
    await tmux("send-keys", "-t", "chat", "C-c");
    await waitForPane((screen) => screen.includes("Bye."), "the goodbye after the second Ctrl-C");
    assert.equal(openai.requests.length, 0);
  });
});
