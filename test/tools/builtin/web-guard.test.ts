// web.fetch cannot be turned against its host: loopback, private, link-local and other
// non-public addresses are refused (numeric and IPv4-mapped forms too, and after DNS), on
// every redirect hop; the allow list opens named hosts; bodies are cut at a byte cap.
// Every server here listens on 127.0.0.1 only.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { DEFAULT_FETCH_MAX_BYTES, fetchText, webTools } from "../../../src/tools/builtin/web.ts";
import { canonicalAddress, nonPublicReason, parseAllowList, vetUrl } from "../../../src/tools/builtin/web-guard.ts";
import { call, errorOf, fakeAgent, toolContext } from "../support/tool-context.ts";

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A tool context whose agent's settings are `config`. */
const withConfig = (config: Record<string, unknown>) => toolContext({}, { agent: fakeAgent({ config }) });
const refusal = (url: string, subject: string) => `web.fetch refused ${url}: ${subject} (set BUB_WEB_FETCH_ALLOW_HOSTS to allow it)`;

describe("web.fetch address checks", () => {
  const tools = webTools();
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? "");
    const redirect = /^\/redirect\?to=(.*)$/.exec(request.url ?? "");
    if (redirect) response.writeHead(302, { location: decodeURIComponent(redirect[1]!) }).end();
    else if (request.url === "/loop") response.writeHead(301, { location: "/loop" }).end();
    else response.writeHead(200, { "content-type": "text/plain" }).end(`page ${request.url}`);
  });
  let port = 0;
  let savedEnv: string | undefined;

  before(async () => {
    port = await listen(server);
    savedEnv = process.env.BUB_WEB_FETCH_ALLOW_HOSTS;
  });
  beforeEach(() => {
    delete process.env.BUB_WEB_FETCH_ALLOW_HOSTS;
    requests.length = 0;
  });
  after(async () => {
    if (savedEnv === undefined) delete process.env.BUB_WEB_FETCH_ALLOW_HOSTS;
    else process.env.BUB_WEB_FETCH_ALLOW_HOSTS = savedEnv;
    await close(server);
  });

  it("refuses 127.0.0.1 without connecting", async () => {
    const url = `http://127.0.0.1:${port}/admin`;
    assert.equal(await errorOf(call(tools, "web.fetch", { url }, toolContext())), refusal(url, "127.0.0.1 is a loopback address"));
    assert.deepEqual(requests, []);
  });

  it("refuses numeric host forms of loopback (2130706433, 0x7f.1, 127.1)", async () => {
    for (const host of ["2130706433", "0x7f.1", "127.1", "0177.0.0.1"]) {
      const message = await errorOf(call(tools, "web.fetch", { url: `http://${host}:${port}/admin` }, toolContext()));
      assert.equal(message, refusal(`http://127.0.0.1:${port}/admin`, "127.0.0.1 is a loopback address"), host);
    }
    assert.deepEqual(requests, []);
  });

  it("refuses IPv6 loopback and IPv4-mapped IPv6 forms", async () => {
    assert.equal(await errorOf(call(tools, "web.fetch", { url: `http://[::1]:${port}/` }, toolContext())), refusal(`http://[::1]:${port}/`, "::1 is a loopback address"));
    assert.equal(
      await errorOf(call(tools, "web.fetch", { url: `http://[::ffff:127.0.0.1]:${port}/` }, toolContext())),
      refusal(`http://[::ffff:7f00:1]:${port}/`, "127.0.0.1 is a loopback address"),
    );
    assert.equal(
      await errorOf(call(tools, "web.fetch", { url: "http://[::ffff:169.254.169.254]/latest/meta-data/" }, toolContext())),
      refusal("http://[::ffff:a9fe:a9fe]/latest/meta-data/", "169.254.169.254 is a link-local address"),
    );
  });

  it("refuses an IPv4-compatible IPv6 address ([::127.0.0.1]) as the loopback address it carries, without connecting", async () => {
    const message = await errorOf(call(tools, "web.fetch", { url: `http://[::127.0.0.1]:${port}/admin` }, toolContext()));
    assert.equal(message, refusal(`http://[::7f00:1]:${port}/admin`, "::7f00:1 is an IPv4-compatible address carrying 127.0.0.1, a loopback address"));
    assert.deepEqual(requests, []);
  });

  it("judges every IPv6 form that carries an IPv4 address by that address", () => {
    const cases: [string, string | null][] = [
      // IPv4-compatible ::a.b.c.d (deprecated)
      ["::7f00:1", "an IPv4-compatible address carrying 127.0.0.1, a loopback address"],
      ["::a00:1", "an IPv4-compatible address carrying 10.0.0.1, a private (RFC 1918) address"],
      ["::a9fe:a9fe", "an IPv4-compatible address carrying 169.254.169.254, a link-local address"],
      ["::2", "an IPv4-compatible address carrying 0.0.0.2, an unspecified address"],
      ["::808:808", null],
      // IPv4-mapped ::ffff:a.b.c.d: judged as the IPv4 address itself
      ["::ffff:7f00:1", "a loopback address"],
      ["::ffff:c0a8:101", "a private (RFC 1918) address"],
      ["::ffff:808:808", null],
      // IPv4-translated ::ffff:0:a.b.c.d (RFC 6145)
      ["::ffff:0:7f00:1", "an IPv4-translated address carrying 127.0.0.1, a loopback address"],
      ["::ffff:0:808:808", null],
      // NAT64 64:ff9b::/96 (RFC 6052)
      ["64:ff9b::a00:1", "a NAT64 address carrying 10.0.0.1, a private (RFC 1918) address"],
      ["64:ff9b::a9fe:a9fe", "a NAT64 address carrying 169.254.169.254, a link-local address"],
      ["64:ff9b::808:808", null],
      // the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) stays refused as a whole
      ["64:ff9b:1::808:808", "a NAT64 address"],
      // 6to4 2002:AABB:CCDD::/48
      ["2002:7f00:1::1", "a 6to4 address carrying 127.0.0.1, a loopback address"],
      ["2002:c0a8:101::", "a 6to4 address carrying 192.168.1.1, a private (RFC 1918) address"],
      ["2002:808:808::1", null],
      // Teredo 2001:0::/32: server in bits 32-63, client inverted in the last 32 bits
      ["2001:0:808:808:8000:63bf:80ff:fffe", "a Teredo address carrying 127.0.0.1, a loopback address"],
      ["2001:0:808:808:8000:63bf:f5ff:fffe", "a Teredo address carrying 10.0.0.1, a private (RFC 1918) address"],
      ["2001:0:a00:1:8000:63bf:f7f7:f7f7", "a Teredo address carrying 10.0.0.1, a private (RFC 1918) address"],
      ["2001:0:808:808:8000:63bf:f7f7:f7f7", null],
      // the unspecified and loopback addresses keep their own words
      ["::", "an unspecified address"],
      ["::1", "a loopback address"],
    ];
    for (const [address, reason] of cases) assert.equal(nonPublicReason(address), reason, address);
  });

  it("refuses a host name whose AAAA record is such a form", async () => {
    const resolver = async () => [{ address: "::7f00:1", family: 6 }];
    await assert.rejects(vetUrl(new URL("http://sneaky.example/"), parseAllowList(""), resolver), {
      message: "web.fetch refused http://sneaky.example/: sneaky.example resolves to ::7f00:1, an IPv4-compatible address carrying 127.0.0.1, a loopback address (set BUB_WEB_FETCH_ALLOW_HOSTS to allow it)",
    });
  });

  it("refuses private, link-local, metadata, unique-local, unspecified and carrier-grade NAT addresses", async () => {
    const cases: [string, string][] = [
      ["http://10.1.2.3/", "10.1.2.3 is a private (RFC 1918) address"],
      ["http://172.16.0.1/", "172.16.0.1 is a private (RFC 1918) address"],
      ["http://192.168.1.1/", "192.168.1.1 is a private (RFC 1918) address"],
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"],
      ["http://[fe80::1]/", "fe80::1 is a link-local address"],
      ["http://[fd00::1]/", "fd00::1 is a unique-local (fc00::/7) address"],
      ["http://0.0.0.0/", "0.0.0.0 is an unspecified address"],
      ["http://[::]/", ":: is an unspecified address"],
      ["http://100.64.0.1/", "100.64.0.1 is a carrier-grade NAT address"],
      ["http://224.0.0.1/", "224.0.0.1 is a multicast address"],
    ];
    for (const [url, subject] of cases) assert.equal(await errorOf(call(tools, "web.fetch", { url }, toolContext())), refusal(url, subject));
  });

  it("checks the addresses a host name resolves to (localhost)", async () => {
    const url = `http://localhost:${port}/admin`;
    const message = await errorOf(call(tools, "web.fetch", { url }, toolContext()));
    assert.match(message, new RegExp(`^web\\.fetch refused ${url.replaceAll(".", "\\.")}: localhost resolves to (127\\.0\\.0\\.1|::1), a loopback address \\(set BUB_WEB_FETCH_ALLOW_HOSTS to allow it\\)$`));
    assert.deepEqual(requests, []);
  });

  it("refuses a host when any one of its addresses is not public", async () => {
    const resolve = async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "10.0.0.7", family: 4 },
    ];
    assert.equal(await errorOf(fetchText("http://mixed.example/", { resolve, allowHosts: [] })), refusal("http://mixed.example/", "mixed.example resolves to 10.0.0.7, a private (RFC 1918) address"));
  });

  it("connects to the checked address, not to a second DNS answer", async () => {
    // pinned.invalid does not resolve through DNS; the check's resolver says 127.0.0.1 and the
    // connection goes there.
    const resolve = async () => [{ address: "127.0.0.1", family: 4 }];
    assert.equal(await fetchText(`http://pinned.invalid:${port}/page`, { resolve, allowHosts: ["pinned.invalid"] }), "page /page");
  });

  it("refuses a redirect from an allowed host to a loopback one at the hop", async () => {
    const config = { web_fetch_allow_hosts: ["127.0.0.1"] };
    for (const target of [`http://127.0.0.2:${port}/admin`, `http://[::1]:${port}/admin`, `http://localhost:${port}/admin`]) {
      requests.length = 0;
      const url = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(target)}`;
      const message = await errorOf(call(tools, "web.fetch", { url }, withConfig(config)));
      assert.ok(message.startsWith(`web.fetch refused ${new URL(target).href}: `), message);
      assert.match(message, /a loopback address \(set BUB_WEB_FETCH_ALLOW_HOSTS to allow it\)$/);
      assert.deepEqual(requests, [`/redirect?to=${encodeURIComponent(target)}`]);
    }
  });

  it("follows allowed redirects, at most five", async () => {
    const config = { web_fetch_allow_hosts: ["127.0.0.1"] };
    const url = `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent("/page")}`;
    assert.equal(await call(tools, "web.fetch", { url }, withConfig(config)), "page /page");
    const loop = `http://127.0.0.1:${port}/loop`;
    assert.equal(await errorOf(call(tools, "web.fetch", { url: loop }, withConfig(config))), `GET ${loop} failed: more than 5 redirects (the last to /loop)`);
    assert.equal(requests.filter((path) => path === "/loop").length, 6);
  });

  it("lets named hosts through: by name, by address, from the settings or the environment", async () => {
    assert.equal(await call(tools, "web.fetch", { url: `http://localhost:${port}/a` }, withConfig({ web_fetch_allow_hosts: ["localhost"] })), "page /a");
    assert.equal(await call(tools, "web.fetch", { url: `http://127.0.0.1:${port}/b` }, withConfig({ web_fetch_allow_hosts: ["127.0.0.1"] })), "page /b");
    process.env.BUB_WEB_FETCH_ALLOW_HOSTS = "example.org, 127.0.0.1";
    assert.equal(await call(tools, "web.fetch", { url: `http://127.0.0.1:${port}/c` }, toolContext()), "page /c");
    // Another host on the list does not open this one.
    process.env.BUB_WEB_FETCH_ALLOW_HOSTS = "example.org";
    assert.match(await errorOf(call(tools, "web.fetch", { url: `http://127.0.0.1:${port}/d` }, toolContext())), /^web\.fetch refused/);
    assert.deepEqual(requests, ["/a", "/b", "/c"]);
  });

  it("classifies addresses with ipaddr.js", () => {
    assert.equal(nonPublicReason("8.8.8.8"), null);
    assert.equal(nonPublicReason("2606:4700:4700::1111"), null);
    assert.equal(nonPublicReason("::ffff:10.0.0.1"), "a private (RFC 1918) address");
    assert.equal(nonPublicReason("64:ff9b::7f00:1"), "a NAT64 address carrying 127.0.0.1, a loopback address");
    assert.equal(canonicalAddress("[::ffff:127.0.0.1]"), "127.0.0.1");
    assert.equal(canonicalAddress("example.org"), null);
    const allow = parseAllowList(" Example.org. ,127.1, [::1] ,");
    assert.deepEqual([...allow.hosts], ["example.org"]);
    assert.deepEqual([...allow.addresses], ["127.0.0.1", "::1"]);
  });
});

describe("web.fetch byte cap", () => {
  const tools = webTools();
  const config = { web_fetch_allow_hosts: ["127.0.0.1"] };
  const HUGE = 200 * 1024 * 1024;
  const CHUNK = Buffer.alloc(64 * 1024, "a");
  let sent = 0;
  const server = createServer((request, response) => {
    sent = 0;
    const chunked = request.url === "/chunked";
    response.writeHead(200, chunked ? { "content-type": "text/plain" } : { "content-type": "text/plain", "content-length": String(HUGE) });
    const pump = () => {
      while (sent < HUGE && !response.destroyed) {
        sent += CHUNK.length;
        if (!response.write(CHUNK)) return void response.once("drain", pump);
      }
      if (!response.destroyed) response.end();
    };
    response.on("error", () => {});
    pump();
  });
  let port = 0;

  before(async () => {
    port = await listen(server);
  });
  after(() => close(server));

  it("cuts a 200 MB body at 10 MB with a notice, reading only a little past the cap", async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const result = (await call(tools, "web.fetch", { url: `http://127.0.0.1:${port}/huge` }, withConfig(config))) as string;
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    const notice = `\n\n[web.fetch truncated the body: read the first ${DEFAULT_FETCH_MAX_BYTES} bytes of ${HUGE} bytes; max_bytes caps what is read (at most BUB_WEB_FETCH_MAX_BYTES)]`;
    assert.ok(result.endsWith(notice), result.slice(-300));
    assert.equal(result.length, DEFAULT_FETCH_MAX_BYTES + notice.length);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(sent < 40 * 1024 * 1024, `the server got to send ${sent} bytes`);
    assert.ok(rssGrowth < 120 * 1024 * 1024, `rss grew by ${rssGrowth} bytes`);
  });

  it("takes max_bytes up to the configured limit", async () => {
    const small = (await call(tools, "web.fetch", { url: `http://127.0.0.1:${port}/chunked`, max_bytes: 1000 }, withConfig(config))) as string;
    assert.equal(small, `${"a".repeat(1000)}\n\n[web.fetch truncated the body: read the first 1000 bytes of a longer body; max_bytes caps what is read (at most BUB_WEB_FETCH_MAX_BYTES)]`);
    const clamped = (await call(tools, "web.fetch", { url: `http://127.0.0.1:${port}/huge`, max_bytes: 50_000 }, withConfig({ ...config, web_fetch_max_bytes: 2000 }))) as string;
    assert.ok(clamped.startsWith(`${"a".repeat(2000)}\n\n[web.fetch truncated the body: read the first 2000 bytes of ${HUGE} bytes;`), clamped.slice(0, 50));
  });
});
