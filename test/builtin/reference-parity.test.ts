// What a model sees from the builtin agent, checked against the reference runtime's shapes
// on the fake OpenAI server: the sectioned system prompt, the bundled gh skill, and a
// failing tool's result as the next request carries it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createBub } from "../../src/builtin/create.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { tempDir } from "../support/temp.ts";

describe("reference parity of a real turn (fake OpenAI server)", () => {
  const server = useFakeOpenAI();

  it("sends the tagged system prompt sections and a failing tool's result in the reference's shape", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const env = { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_HOME: home };
      const framework = await createBub({ workspace: dir.path, home, env });
      server.script(reply.toolCalls([{ id: "call_1", name: "bash", arguments: '{"cmd":"exit 3"}' }]), reply.text("It failed."));
      await framework.running(() => framework.processInbound({ session_id: "s", content: "run it" }));
      assert.equal(server.requests.length, 2);

      const system = String(server.requests[0]!.body.messages[0]!.content);
      assert.equal(server.requests[0]!.body.messages[0]!.role, "system");
      assert.match(system, /^<general_instruct>\n[^]+\n<\/general_instruct>\n<response_instruct>\n[^]+\n<\/response_instruct>\n<context_contract>\n[^]+\n<\/context_contract>\n\n/);
      assert.match(system, /<available_skills>[^]*\n- gh: [^]*<\/available_skills>/);

      const messages = server.requests[1]!.body.messages;
      const call = messages.find((message) => message.role === "assistant");
      assert.equal(call?.content, "", "a tool-call message has empty content, not null");
      const result = messages.find((message) => message.role === "tool");
      assert.equal(result?.name, "bash");
      assert.equal(result?.tool_call_id, "call_1");
      assert.equal(
        result?.content,
        '{"kind": "tool", "message": "Tool \'bash\' execution failed.", "details": {"error": "command exited with code 3\\noutput:\\n(no output)"}}',
      );
    } finally {
      await dir.cleanup();
    }
  });
});
