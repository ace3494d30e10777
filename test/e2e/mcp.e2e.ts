/**
 * MCP with the installed binary: servers from <BUB_HOME>/mcp.json (the real filesystem
 * server over stdio, an SDK-built Streamable HTTP server with a bearer header from the
 * environment, one that crashes), `bub mcp list`, `bub hooks`, a `bub run` turn in which the
 * fake model calls both servers' tools and which exits with its servers closed, and a
 * workspace's `.mcp.json` that is used only once the workspace is trusted.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { startMcpHttpServer, type McpHttpServer } from "../support/mcp-http-server.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const filesystemServer = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));
const TOKEN = "mcp-e2e-bearer-token-5678";

describe("MCP servers (installed package)", () => {
  let model: FakeOpenAI;
  let http: McpHttpServer;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let bubHome: string;
  let files: string;
  let env: Record<string, string>;

  before(async () => {
    await installedPackage();
    [model, http] = await Promise.all([startFakeOpenAI(), startMcpHttpServer({ requiredAuthorization: `Bearer ${TOKEN}` })]);
    home = await tempHome();
    bubHome = join(home.path, ".bub");
    files = join(home.path, "files");
    await mkdir(bubHome);
    await mkdir(files);
    await writeFile(join(files, "plan.txt"), "step one: write tests\n");
    await writeFile(
      join(bubHome, "mcp.json"),
      `${JSON.stringify(
        {
          mcpServers: {
            files: { command: process.execPath, args: [filesystemServer, files] },
            web: { type: "http", url: http.url, headers: { Authorization: "Bearer ${WEB_TOKEN}" } },
            broken: { command: process.execPath, args: ["-e", "console.error('cannot start: no database'); process.exit(1)"] },
          },
        },
        null,
        2,
      )}\n`,
    );
    env = { BUB_HOME: bubHome, BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-e2e", WEB_TOKEN: TOKEN };
  });
  after(() => Promise.all([model.close(), http.close(), home.cleanup()]));

  it("bub mcp list shows each server's status and tools, and exits 1 for the one that failed", async () => {
    const list = await runBub(["mcp", "list"], { home: home.path, env });
    assert.equal(list.code, 1, list.stderr);
    assert.match(list.stdout, /^files \(stdio, home\): connected, 14 tools$/m);
    assert.match(list.stdout, /^ {2}mcp\.files\.read_text_file$/m);
    assert.match(list.stdout, /^web \(http, home\): connected, 4 tools$/m);
    assert.match(list.stdout, /^ {2}mcp\.web\.echo$/m);
    assert.match(list.stdout, /^broken \(stdio, home\): failed — .*cannot start: no database/m);
    assert.ok(!`${list.stdout}${list.stderr}`.includes(TOKEN), "the header's value is never printed");
  });

  it("bub hooks names the server that failed and why", async () => {
    const hooks = await runBub(["hooks"], { home: home.path, env });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.match(hooks.stdout, /^loadState: mcp, builtin$/m);
    assert.match(hooks.stdout, /\nMCP servers:\nbroken \(stdio, home\): failed — MCP error -32000: Connection closed \(its stderr: cannot start: no database\)\n/);
  });

  it("a turn calls tools on both servers, survives the broken one, and exits with the servers closed", async () => {
    model.script(
      reply.toolCalls([
        { name: "mcp_files_read_text_file", arguments: JSON.stringify({ path: join(files, "plan.txt") }) },
        { name: "mcp_web_echo", arguments: '{"text":"ping"}' },
      ]),
      reply.text("The plan starts with tests."),
    );
    const started = Date.now();
    const run = await runBub(["run", "what is the plan?"], { home: home.path, env, timeoutMs: 20_000 });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /The plan starts with tests\./);
    const log = await readFile(join(bubHome, "logs", "bub.log"), "utf8");
    assert.match(log, /WARN bub:mcp mcp\.server\.failed server=broken source=home: .*cannot start: no database/);
    assert.ok(!log.includes(TOKEN), "the header's value never reaches the log");
    assert.ok(Date.now() - started < 15_000, "bub exits once the turn is done: its servers were closed");
    const offered = model.requests[0]!.body.tools!.map((tool) => tool.function.name);
    assert.ok(offered.includes("mcp_files_read_text_file") && offered.includes("mcp_web_add"));
    const results = model.requests[1]!.body.messages.filter((message) => message.role === "tool").map((message) => String(message.content));
    assert.deepEqual(results, ["step one: write tests\n", "echo: ping"]);
    assert.ok(!run.stderr.includes(TOKEN));
  });

  it("uses a workspace's .mcp.json only after `bub trust`", async () => {
    const ws = join(home.path, "project");
    await mkdir(ws);
    await writeFile(join(ws, ".mcp.json"), JSON.stringify({ mcpServers: { local: { type: "http", url: http.url, headers: { Authorization: `Bearer ${TOKEN}` } } } }));
    const before = await runBub(["mcp", "list"], { home: home.path, cwd: ws, env });
    assert.match(before.stdout, /\.mcp\.json is not used: this workspace is not trusted/);
    assert.doesNotMatch(before.stdout, /^local /m);
    const trust = await runBub(["trust"], { home: home.path, cwd: ws, env });
    assert.equal(trust.code, 0, trust.stderr);
    const afterTrust = await runBub(["mcp", "list"], { home: home.path, cwd: ws, env });
    assert.match(afterTrust.stdout, /^local \(http, workspace\): connected, 4 tools$/m);
    assert.doesNotMatch(afterTrust.stdout, /is not used/);
  });
});
