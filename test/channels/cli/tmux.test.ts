// The chat REPL for real: `bub chat` in a tmux pseudo terminal against the fake model.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../../support/fake-openai.ts";
import { tempDir } from "../../support/temp.ts";
import { hasTmux, tmuxServer } from "../../support/tmux.ts";

const bin = fileURLToPath(new URL("../../../src/bin/bub.ts", import.meta.url));
const { tmux, waitForPane } = tmuxServer(`bub-test-${process.pid}`);

describe("bub chat in a real terminal (tmux)", { skip: hasTmux ? false : "tmux is not installed (apt-get install tmux)" }, () => {
  let server: FakeOpenAI;
  let dir: { path: string; cleanup: () => Promise<void> };
  before(async () => {
    server = await startFakeOpenAI();
    dir = await tempDir();
  });
  after(async () => {
    await tmux("kill-server").catch(() => {});
    await server.close();
    await dir.cleanup();
  });

  it("shows a spinner until the first token, renders the streamed markdown, then gives the prompt back", async () => {
    const workspace = join(dir.path, "demo");
    await mkdir(workspace);
    server.script(reply.text("Here is **bold** text and code:\n\n```js\nconst answer = 42;\n```\n\n- first item\n- second item\n", { delayMs: 1500 }));
    const env = {
      BUB_HOME: join(dir.path, "home"),
      BUB_MODEL: "fake:any",
      BUB_API_BASE: server.url,
      BUB_API_KEY: "sk-test",
      TERM: "xterm-256color",
      PATH: process.env.PATH ?? "",
      HOME: dir.path,
    };
    const command = [process.execPath, bin, "-w", workspace, "chat"].map((part) => `'${part}'`).join(" ");
    const exports = Object.entries(env).map(([key, value]) => `${key}='${value}'`).join(" ");
    await tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "30", `env ${exports} ${command}`);
    // Keep the pane (and its last screen) after `bub chat` exits, so "Bye." can still be read.
    await tmux("set-option", "-t", "chat", "remain-on-exit", "on");
    await waitForPane((screen) => /^demo > ?$/m.test(screen), "the prompt");
    await tmux("send-keys", "-t", "chat", "hello there", "Enter");
    await waitForPane((screen) => screen.includes("Generating"), "the spinner");
    const answered = await waitForPane((screen) => screen.includes("const answer = 42;") && screen.includes("second item") && !screen.includes("Generating") && /^demo > ?$/m.test(screen), "the rendered answer and the prompt");
    assert.match(answered, /Here is bold text and code:/, "emphasis is rendered without its markers");
    assert.doesNotMatch(answered, /\*\*bold\*\*/);
    assert.doesNotMatch(answered, /```/, "the code fence is rendered, not shown");
    assert.match(answered, /demo > hello there/, "the submitted line stays in the scrollback");
    await tmux("send-keys", "-t", "chat", ",quit", "Enter");
    await waitForPane((screen) => screen.includes("Bye."), "the goodbye");
    assert.equal(server.requests.length, 1);
  });
});
