import assert from "node:assert/strict";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createBub } from "../../src/builtin/create.ts";
import { mcpOf } from "../../src/mcp/plugin.ts";
import { toolsOf } from "../../src/tools/global.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { startMcpHttpServer, type McpHttpServer } from "../support/mcp-http-server.ts";
import { tempDir } from "../support/temp.ts";

const filesystemServer = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));

function toolMessages(messages: Record<string, unknown>[]): string[] {
  return messages.filter((message) => message.role === "tool").map((message) => String(message.content));
}

async function tapeText(home: string): Promise<string> {
  const dir = join(home, "tapes");
  const files = (await readdir(dir)).filter((name) => name.endsWith(".jsonl"));
  return (await Promise.all(files.map((name) => readFile(join(dir, name), "utf8")))).join("");
}

describe("MCP servers' tools in a turn", () => {
  const model = useFakeOpenAI();
  let http: McpHttpServer;
  let dir: { path: string; cleanup: () => Promise<void> };
  let home: string;
  let workspace: string;
  let files: string;

  before(async () => {
    http = await startMcpHttpServer({ requiredAuthorization: "Bearer token-for-mcp-http-1234" });
    dir = await tempDir();
    home = join(dir.path, "home");
    workspace = join(dir.path, "ws");
    files = join(dir.path, "files");
    await mkdir(home, { recursive: true });
    await mkdir(workspace, { recursive: true });
    await mkdir(files, { recursive: true });
    await writeFile(join(files, "notes.txt"), "the answer is 42\n");
    await writeFile(
      join(home, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          fs: { command: process.execPath, args: [filesystemServer, files] },
          web: { type: "http", url: http.url, headers: { Authorization: "Bearer ${MCP_TOKEN}" } },
          broken: { command: process.execPath, args: ["-e", "console.error('missing API key for broken'); process.exit(2)"] },
        },
      }),
    );
  });

  after(async () => {
    await http.close();
    await dir.cleanup();
  });

  function env(): Record<string, string> {
    return { BUB_MODEL: "fake:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-test", BUB_HOME: home, MCP_TOKEN: "token-for-mcp-http-1234", PATH: process.env.PATH ?? "" };
  }

  it("connects on the first turn, offers every tool with its schema, and the model calls them over stdio and HTTP", async () => {
    const framework = await createBub({ workspace, home, env: env(), trustWorkspace: false });
    try {
      assert.equal(mcpOf(framework)?.statuses().length, 0, "nothing is connected before a turn");
      assert.ok(!toolsOf(framework).has("mcp.fs.read_text_file"));
      model.script(
        reply.toolCalls([
          { name: "mcp_fs_read_text_file", arguments: JSON.stringify({ path: join(files, "notes.txt") }) },
          { name: "mcp_web_echo", arguments: '{"text":"hi"}' },
          { name: "mcp_web_add", arguments: '{"a":2,"b":3}' },
          { name: "mcp_web_fail", arguments: "{}" },
        ]),
        reply.text("done"),
      );
      const result = await framework.running(() => framework.processInbound({ session_id: "s", content: "use the tools" }));
      assert.equal(result.modelOutput, "done");

      const offered = model.requests[0]!.body.tools!.map((tool) => tool.function);
      const read = offered.find((tool) => tool.name === "mcp_fs_read_text_file");
      assert.ok(read, "the filesystem server's tools are offered");
      assert.deepEqual((read.parameters as { required?: string[] }).required, ["path"]);
      const echo = offered.find((tool) => tool.name === "mcp_web_echo")!;
      assert.equal(echo.description, "Echo the text back");
      assert.deepEqual(echo.parameters!.properties, { text: { type: "string", description: "what to echo" } });
      assert.ok(!offered.some((tool) => tool.name.startsWith("mcp_broken")));

      const results = toolMessages(model.requests[1]!.body.messages);
      assert.equal(results[0], "the answer is 42\n");
      assert.equal(results[1], "echo: hi");
      assert.equal(results[2], '{"sum":5}');
      assert.match(results[3]!, /the fail tool failed on purpose/);
      assert.match(results[3]!, /execution failed/);
      // The three calls run side by side: the server may see them in any order.
      assert.deepEqual([...http.calls].sort(), ["add", "echo", "fail"]);
      assert.ok(http.authorizations.every((header) => header === "Bearer token-for-mcp-http-1234"), "the header reached the server with the variable filled in");

      const broken = mcpOf(framework)!.statuses().find((status) => status.name === "broken")!;
      assert.equal(broken.state, "failed");
      assert.match(broken.error!, /missing API key for broken/);
      assert.ok(!(await tapeText(home)).includes("token-for-mcp-http-1234"), "the header's secret never reaches the tape");
    } finally {
      await framework.shutdown();
    }
  });

  it("keeps the connections for later turns and closes them at shutdown", async () => {
    const framework = await createBub({ workspace, home, env: env(), trustWorkspace: false });
    const manager = mcpOf(framework)!;
    model.script(reply.text("one"), reply.toolCalls([{ name: "mcp_web_echo", arguments: '{"text":"again"}' }]), reply.text("two"));
    await framework.running(() => framework.processInbound({ session_id: "k", content: "first" }));
    const requestsAfterFirst = http.authorizations.length;
    await framework.running(() => framework.processInbound({ session_id: "k", content: "second" }));
    assert.equal(toolMessages(model.requests[2]!.body.messages).at(-1), "echo: again");
    assert.equal(http.authorizations.length, requestsAfterFirst + 1, "the second turn made one call, no new handshake");
    await framework.shutdown();
    assert.ok(manager.statuses().filter((status) => status.name !== "broken").every((status) => status.state === "closed"));
    assert.ok(!toolsOf(framework).has("mcp.fs.read_text_file"), "the tools leave with their servers");
  });

  it("uses a workspace's .mcp.json only when the workspace is trusted", async () => {
    const other = join(dir.path, "other");
    await mkdir(other, { recursive: true });
    await writeFile(join(other, ".mcp.json"), JSON.stringify({ mcpServers: { local: { type: "http", url: http.url, headers: { Authorization: "Bearer token-for-mcp-http-1234" } } } }));
    for (const trusted of [false, true]) {
      const framework = await createBub({ workspace: other, home: join(dir.path, "empty-home"), env: { ...env(), BUB_HOME: join(dir.path, "empty-home") }, trustWorkspace: trusted });
      try {
        model.script(reply.text("ok"));
        await framework.running(() => framework.processInbound({ session_id: "t", content: "hi" }));
        const names = model.requests.at(-1)!.body.tools!.map((tool) => tool.function.name);
        assert.equal(names.includes("mcp_local_echo"), trusted, `trusted=${trusted}`);
        assert.equal(await mcpOf(framework)!.ignoredWorkspaceFile(), trusted ? null : join(other, ".mcp.json"));
      } finally {
        await framework.shutdown();
      }
    }
  });
});
