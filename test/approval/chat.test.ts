// BUB_APPROVAL=ask in `bub chat`: at a terminal the person answers a y/N prompt; with piped
// input nobody can, and the model reads a tool error saying how to allow such calls.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import { runChat } from "../../src/builtin/commands/chat.ts";
import { historyFile, parseHistory } from "../../src/channels/cli/history.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { tempDir } from "../support/temp.ts";
import { fakeTerminal } from "../channels/cli/support.ts";

describe("approval in bub chat (BUB_APPROVAL=ask)", () => {
  const server = useFakeOpenAI();

  async function chat(dir: string, tty: boolean, drive: (terminal: ReturnType<typeof fakeTerminal>) => Promise<void>) {
    const home = join(dir, ".bub");
    const env = { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_HOME: home, BUB_APPROVAL: "ask", TERM: "xterm" };
    const framework = await createBub({ workspace: dir, home, env, trustWorkspace: false });
    const terminal = fakeTerminal(tty);
    const running = runChat(framework, { sessionId: "approval-chat" }, { input: terminal.input, output: terminal.output, env });
    await drive(terminal);
    assert.equal(await running, 0);
    return { terminal, home };
  }

  const toolResults = () => server.requests.flatMap((request) => request.body.messages.filter((message) => message.role === "tool").map((message) => String(message.content)));

  it("asks at the terminal: y runs the command, anything else denies it; answers are not history", { timeout: 30_000 }, async () => {
    const dir = await tempDir();
    try {
      server.script(
        reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "touch yes.txt && echo made" }) }]),
        reply.text("Made it."),
        reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "touch no.txt" }) }]),
        reply.text("Left it."),
      );
      const { terminal, home } = await chat(dir.path, true, async (terminal) => {
        terminal.input.write("make yes\r");
        await terminal.waitFor("allow bash? [y/N]");
        assert.match(terminal.text(), /Approval needed: bash runs a shell command/);
        assert.match(terminal.text(), /touch yes\.txt && echo made/);
        assert.equal(existsSync(join(dir.path, "yes.txt")), false, "nothing runs before the answer");
        terminal.input.write("y\r");
        await terminal.waitFor("Made it.");
        terminal.input.write("make no\r");
        // Each question is printed once (the prompt line is redrawn many times).
        await terminal.waitFor(/Approval needed[\s\S]*Approval needed/);
        terminal.input.write("n\r");
        await terminal.waitFor("Left it.");
        terminal.input.write(",quit\r");
      });
      assert.equal(existsSync(join(dir.path, "yes.txt")), true);
      assert.equal(existsSync(join(dir.path, "no.txt")), false);
      assert.deepEqual(toolResults().filter((text, index, all) => all.indexOf(text) === index), ["made", '{"kind": "tool", "message": "bash: the user denied this call"}']);
      assert.match(terminal.text(), /bash: approved/);
      assert.match(terminal.text(), /bash: denied/);
      const history = parseHistory(await readFile(historyFile(home, dir.path), "utf8"));
      assert.deepEqual(history, ["make yes", "make no", ",quit"]);
    } finally {
      await dir.cleanup();
    }
  });

  it("with piped input nobody is asked: the model reads why, and how to allow it", { timeout: 30_000 }, async () => {
    const dir = await tempDir();
    try {
      server.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "touch piped.txt" }) }]), reply.text("Could not."));
      const { terminal } = await chat(dir.path, false, async (terminal) => {
        terminal.input.end("make a file\n");
      });
      assert.equal(existsSync(join(dir.path, "piped.txt")), false);
      const [result] = toolResults();
      assert.match(result!, /bash: not run: this call needs the user's approval \(BUB_APPROVAL=ask\) and nobody can be asked here \(the chat's input is not a terminal\); set BUB_APPROVAL=off/);
      assert.match(terminal.text(), /Could not\./);
      assert.doesNotMatch(terminal.text(), /allow bash\?/);
    } finally {
      await dir.cleanup();
    }
  });
});
