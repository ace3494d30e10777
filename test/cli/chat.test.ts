import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import { runChat } from "../../src/builtin/commands/chat.ts";
import { historyFile, parseHistory } from "../../src/channels/cli/history.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/temp.ts";
import { fakeTerminal } from "../channels/cli/support.ts";

describe("bub chat against a fake OpenAI-compatible model", () => {
  let server: FakeOpenAI;
  before(async () => {
    server = await startFakeOpenAI();
  });
  after(async () => {
    await server.close();
  });

  it("holds a conversation: streamed answer, tool line, history file, Bye at end of input", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      await writeFile(join(dir.path, "README.md"), "hello from the readme\n");
      const env = { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_HOME: home };
      const framework = await createBub({ workspace: dir.path, home, env });
      server.script(
        reply.toolCalls([{ id: "call_1", name: "fs_read", arguments: '{"path":"README.md"}' }]),
        reply.text("The **readme** says hello."),
      );
      const terminal = fakeTerminal(false);
      terminal.input.end("what does the readme say?\n");
      const code = await runChat(framework, { sessionId: "chat-test" }, { input: terminal.input, output: terminal.output, env });
      assert.equal(code, 0);
      const output = terminal.text();
      assert.match(output, /model: fake:any/);
      assert.match(output, /● fs\.read\(path: "README\.md"\)\n  ⎿ completed in \d+ ms\n/);
      assert.match(output, /The \*\*readme\*\* says hello\.\n/);
      assert.match(output, /Bye\.\n$/);
      assert.equal(server.requests.length, 2);
      const history = parseHistory(await readFile(historyFile(home, dir.path), "utf8"));
      assert.deepEqual(history, ["what does the readme say?"]);
    } finally {
      await dir.cleanup();
    }
  });
});
