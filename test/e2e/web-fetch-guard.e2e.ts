/**
 * web.fetch's address check with the installed binary: an IPv6 literal that carries the
 * loopback IPv4 address (`[::127.0.0.1]`, `[::ffff:0:127.0.0.1]`, NAT64 `[64:ff9b::127.0.0.1]`)
 * is refused by the check, in the same words as `http://127.0.0.1`, and nothing is
 * requested from the server listening there.
 */
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

describe("web.fetch refuses IPv6 forms of a loopback address (installed package)", () => {
  let model: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  const requests: string[] = [];
  const target = createServer((request, response) => {
    requests.push(request.url ?? "");
    response.end("internal admin page");
  });
  let port = 0;
  before(async () => {
    await installedPackage();
    model = await startFakeOpenAI();
    home = await tempHome();
    await mkdir(join(home.path, ".bub"), { recursive: true });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    port = (target.address() as AddressInfo).port;
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-test" };
  });
  after(async () => {
    target.closeAllConnections();
    await Promise.all([model.close(), home.cleanup(), new Promise((resolve) => target.close(resolve))]);
  });

  it("[::127.0.0.1] and the other embedding forms are refused like 127.0.0.1, before any connection", async () => {
    const urls = [`http://127.0.0.1:${port}/admin`, `http://[::127.0.0.1]:${port}/admin`, `http://[::ffff:0:127.0.0.1]:${port}/admin`, `http://[64:ff9b::127.0.0.1]:${port}/admin`];
    model.script(reply.toolCalls(urls.map((url) => ({ name: "web_fetch", arguments: JSON.stringify({ url }) }))), reply.text("Could not fetch."));
    const run = await runBub(["run", "fetch the admin page"], { home: home.path, env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const results = model.requests.at(-1)!.body.messages.filter((message) => message.role === "tool").map((message) => String(message.content));
    assert.equal(results.length, urls.length, results.join("\n"));
    const wording = / is (?:an? [\w-]+ address carrying 127\.0\.0\.1, )?a loopback address \(set BUB_WEB_FETCH_ALLOW_HOSTS to allow it\)/;
    assert.match(results[0]!, new RegExp(`web\\.fetch refused http://127\\.0\\.0\\.1:${port}/admin: 127\\.0\\.0\\.1 is a loopback address \\(set BUB_WEB_FETCH_ALLOW_HOSTS to allow it\\)`));
    assert.match(results[1]!, new RegExp(`web\\.fetch refused http://\\[::7f00:1\\]:${port}/admin: ::7f00:1 is an IPv4-compatible address carrying 127\\.0\\.0\\.1, a loopback address`));
    for (const result of results) assert.match(result, wording);
    assert.deepEqual(requests, [], "nothing reached the server");
  });
});
