// An unknown tool name is answered with the closest tool names: the edit-distance ranking,
// the executor's stand-in tool, and the builtin plugin's answer in a real turn.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createBub } from "../../src/builtin/create.ts";
import { createToolExecutor, unknownTool } from "../../src/tools/executor.ts";
import { closestToolNames, editDistance } from "../../src/tools/suggest.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { captureLogs, tempDir } from "../support/temp.ts";

describe("closest tool names", () => {
  it("ranks by edit distance ignoring case, dots and dashes, then by name", () => {
    assert.equal(editDistance("kitten", "sitting"), 3);
    assert.equal(editDistance("", "abc"), 3);
    assert.equal(editDistance("same", "same"), 0);
    const names = ["bash", "fs_read", "fs_write", "fs_edit", "tape_search"];
    assert.deepEqual(closestToolNames("fs_raed", names, 2), ["fs_read", "fs_edit"]);
    assert.deepEqual(closestToolNames("FS.READ", names, 1), ["fs_read"]);
    assert.deepEqual(closestToolNames("zzzzzzzzzzzz", ["b", "a"]), ["a", "b"], "always answers, however far");
    assert.deepEqual(closestToolNames("x", []), []);
  });

  it("names them in the executor's unknown-tool error", async () => {
    const { result } = await captureLogs(() => createToolExecutor().execute([{ tool: unknownTool("fs_raed", ["bash", "fs_read", "fs_write"]), arguments: {} }]));
    assert.deepEqual(result.toolResults, [{ kind: "tool", message: "Unknown tool name: fs_raed. Closest tool names: fs_read, fs_write, bash." }]);
  });
});

describe("the builtin plugin's answer to an unknown tool", () => {
  const server = useFakeOpenAI();

  async function toolAnswer(name: string): Promise<string> {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const framework = await createBub({ workspace: dir.path, home, env: { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "k", BUB_HOME: home } });
      server.script(reply.toolCalls([{ name, arguments: "{}" }]), reply.text("ok"));
      await framework.running(() => framework.processInbound({ session_id: "s", content: "go" }));
      return String(server.requests.at(-1)!.body.messages.find((message) => message.role === "tool")?.content);
    } finally {
      await dir.cleanup();
    }
  }

  it("suggests similar names, and otherwise the nearest ones, never advice about skills", async () => {
    assert.match(await toolAnswer("fs_raed"), /^Tool `fs_raed` does not exist\. Did you mean one of the following\?\n- fs_read/);
    const far = await toolAnswer("search_the_web_now");
    assert.match(far, /^Tool `search_the_web_now` does not exist\. The closest tool names are:\n- \w+\n- \w+\n- \w+$/);
    assert.doesNotMatch(far, /skill/);
  });
});
