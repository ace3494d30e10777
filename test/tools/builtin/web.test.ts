// web.fetch against a real HTTP server on 127.0.0.1: body, headers, error statuses, a dead
// port and a server that never answers; with 127.0.0.1 opened through the allow list, since
// web.fetch refuses loopback addresses otherwise (web-guard.test.ts covers the refusals).
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { webTools } from "../../../src/tools/builtin/web.ts";
import { call, errorOf, fakeAgent, toolContext } from "../support/tool-context.ts";

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/** A tool context whose agent's settings open 127.0.0.1. */
const allowLocal = () => toolContext({}, { agent: fakeAgent({ config: { web_fetch_allow_hosts: ["127.0.0.1"] } }) });

describe("web.fetch", () => {
  const tools = webTools();
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    if (request.url === "/missing") {
      response.writeHead(404, { "content-type": "text/plain" }).end("no such page");
    } else if (request.url === "/hang") {
      response.writeHead(200);
      response.write("partial");
      // never ends
    } else {
      response.writeHead(200, { "content-type": "text/markdown; charset=utf-8" }).end("# Title\n\nbody ✓");
    }
  });
  let base = "";

  before(async () => {
    base = await listen(server);
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it("returns the body and asks for markdown by default", async () => {
    assert.equal(await call(tools, "web.fetch", { url: `${base}/page` }, allowLocal()), "# Title\n\nbody ✓");
    assert.equal(seen.at(-1)!.accept, "text/markdown");
  });

  it("merges caller headers over the defaults", async () => {
    await call(tools, "web.fetch", { url: `${base}/page`, headers: { accept: "text/html", "x-test": "1" } }, allowLocal());
    assert.equal(seen.at(-1)!.accept, "text/html");
    assert.equal(seen.at(-1)!["x-test"], "1");
  });

  it("fails on a non-2xx status with the status and the start of the body", async () => {
    assert.equal(await errorOf(call(tools, "web.fetch", { url: `${base}/missing` }, allowLocal())), `GET ${base}/missing failed: HTTP 404 Not Found\nno such page`);
  });

  it("fails clearly when nothing listens on the port", async () => {
    const dead = createServer();
    const url = await listen(dead);
    await new Promise((resolve) => dead.close(resolve));
    assert.equal(await errorOf(call(tools, "web.fetch", { url }, allowLocal())), `GET ${url} failed: connection refused (is the server running?)`);
  });

  it("gives up after the timeout, body included", async () => {
    assert.equal(await errorOf(call(tools, "web.fetch", { url: `${base}/hang`, timeout: 1 }, allowLocal())), `GET ${base}/hang timed out after 1 seconds`);
  });

  it("rejects URLs it cannot fetch", async () => {
    assert.equal(await errorOf(call(tools, "web.fetch", { url: "not a url" }, allowLocal())), "invalid URL: not a url");
    assert.equal(await errorOf(call(tools, "web.fetch", { url: "file:///etc/passwd" }, allowLocal())), "unsupported URL scheme 'file': web.fetch reads http and https URLs");
  });
});
