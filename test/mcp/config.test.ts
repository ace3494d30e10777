import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { expandServer, loadMcpConfig, type McpServerConfig } from "../../src/mcp/config.ts";
import { serverSecrets } from "../../src/mcp/connection.ts";
import { McpManager } from "../../src/mcp/manager.ts";
import { printMcpList } from "../../src/mcp/report.ts";
import { mcpToolName, resultText } from "../../src/mcp/tools.ts";
import { createToolRegistry } from "../../src/tools/registry.ts";
import { invokeTool } from "../../src/tools/executor.ts";
import { startMcpHttpServer } from "../support/mcp-http-server.ts";
import { tempDir } from "../support/temp.ts";

describe("MCP configuration", () => {
  it("reads both files, the workspace replacing a home server of the same name, and reports bad entries by name", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, "home");
      const workspace = join(dir.path, "ws");
      await mkdir(home);
      await mkdir(workspace);
      await writeFile(
        join(home, "mcp.json"),
        JSON.stringify({ mcpServers: { a: { command: "a-server", args: ["--x"] }, shared: { url: "http://127.0.0.1:1/mcp" }, bad: { args: [] }, old: { type: "sse", url: "http://x" } } }),
      );
      await writeFile(join(workspace, ".mcp.json"), JSON.stringify({ mcpServers: { shared: { command: "local", env: { K: "v" }, timeout: 5 }, off: { command: "x", disabled: true } } }));
      const untrusted = await loadMcpConfig({ home, workspace, trusted: false });
      assert.deepEqual(untrusted.servers.map((server) => [server.name, server.transport, server.source]), [["a", "stdio", "home"], ["shared", "http", "home"]]);
      assert.deepEqual(untrusted.problems.map((problem) => problem.name), ["bad", "old"]);
      assert.match(untrusted.problems[0]!.message, /needs a "command"/);
      assert.match(untrusted.problems[1]!.message, /SSE/);

      const trusted = await loadMcpConfig({ home, workspace, trusted: true });
      const shared = trusted.servers.find((server) => server.name === "shared")!;
      assert.equal(shared.source, "workspace");
      assert.equal(shared.transport, "stdio");
      assert.equal(shared.timeoutSeconds, 5);
      assert.equal(trusted.servers.find((server) => server.name === "off")!.disabled, true);

      await writeFile(join(home, "mcp.json"), "{ not json");
      const broken = await loadMcpConfig({ home, workspace, trusted: false });
      assert.equal(broken.problems[0]!.name, null);
      assert.match(broken.problems[0]!.message, /is not valid JSON/);
    } finally {
      await dir.cleanup();
    }
  });

  it("fills ${NAME} and ${NAME:-default} from the environment and names a missing variable without showing values", () => {
    const server: McpServerConfig = {
      name: "s", source: "home", file: "f", disabled: false, timeoutSeconds: 60,
      transport: "stdio", command: "${TOOL_DIR}/server", args: ["--port", "${PORT:-8080}"], env: { API_KEY: "${SERVICE_KEY}", MODE: "fast" },
    };
    const expanded = expandServer(server, { TOOL_DIR: "/opt/t", SERVICE_KEY: "sk-service-secret-1" });
    assert.ok(expanded.transport === "stdio");
    assert.equal(expanded.command, "/opt/t/server");
    assert.deepEqual(expanded.args, ["--port", "8080"]);
    assert.deepEqual(expanded.env, { API_KEY: "sk-service-secret-1", MODE: "fast" });
    assert.deepEqual(serverSecrets(server, expanded).map((secret) => secret.name), ["mcp.s.env.API_KEY"]);
    assert.throws(() => expandServer(server, { TOOL_DIR: "/opt/t" }), /env\.API_KEY uses \$\{SERVICE_KEY\}, which is not set/);
  });
});

describe("MCP tool names and results", () => {
  it("keeps names within what models accept and unique", () => {
    assert.equal(mcpToolName("fs", "read_file"), "mcp.fs.read_file");
    assert.equal(mcpToolName("my server", "get/thing"), "mcp.my_server.get_thing");
    const long = mcpToolName("server", "x".repeat(100));
    assert.equal(long.length, 64);
    assert.notEqual(long, mcpToolName("server", `${"x".repeat(99)}y`));
    assert.equal(mcpToolName("fs", "read", new Set(["mcp.fs.read"])), "mcp.fs.read-2");
  });

  it("turns content blocks into text", () => {
    assert.equal(resultText({ content: [{ type: "text", text: "a" }, { type: "image", data: "AAAA", mimeType: "image/png" }] }), "a\n[image image/png, 3 bytes]");
    assert.equal(resultText({ content: [], structuredContent: { ok: true } }), '{"ok":true}');
    assert.equal(resultText({ content: [] }), "(no output)");
  });
});

describe("MCP manager", () => {
  it("reports each failed server with its reason (no answer in time, HTTP 401, no such command), and an abort stops a running call", async () => {
    const dir = await tempDir();
    const http = await startMcpHttpServer();
    const locked = await startMcpHttpServer({ requiredAuthorization: "Bearer right" });
    try {
      await writeFile(
        join(dir.path, "mcp.json"),
        JSON.stringify({
          mcpServers: {
            web: { url: http.url },
            mute: { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"], timeout: 0.3 },
            locked: { url: locked.url, headers: { Authorization: "Bearer wrong" } },
            missing: { command: "bub-test-no-such-command" },
          },
        }),
      );
      const registry = createToolRegistry();
      const manager = new McpManager({ home: dir.path, workspace: dir.path, env: process.env, trusted: false, registry: async () => registry });
      const started = performance.now();
      await manager.ensureStarted();
      assert.ok(performance.now() - started < 5000);
      const mute = manager.statuses().find((status) => status.name === "mute")!;
      assert.equal(mute.state, "failed");
      assert.match(mute.error!, /no answer within 0.3 s/);
      assert.match(manager.statuses().find((status) => status.name === "locked")!.error!, /^HTTP 401: /);
      assert.equal(manager.statuses().find((status) => status.name === "missing")!.error, "command not found: bub-test-no-such-command");

      const controller = new AbortController();
      const call = invokeTool(registry.get("mcp.web.slow")!, {}, null, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error("turn cancelled")), 50);
      await assert.rejects(call, /cancelled|abort/i);
      assert.deepEqual(http.calls, ["slow"]);
      await manager.close();
      assert.equal(registry.has("mcp.web.slow"), false);
    } finally {
      await http.close();
      await locked.close();
      await dir.cleanup();
    }
  });
});

describe("bub mcp list", () => {
  it("says where servers go when none are configured", async () => {
    let text = "";
    const ok = await printMcpList(null, { home: "/h/.bub/mcp.json", workspace: "/w/.mcp.json" }, { write: (chunk: string) => (text += chunk) });
    assert.equal(ok, true);
    assert.equal(text, "No MCP servers configured. Add them to /h/.bub/mcp.json (or a trusted workspace's /w/.mcp.json); see docs/mcp.md.\n");
  });
});
