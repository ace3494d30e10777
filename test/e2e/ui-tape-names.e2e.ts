/**
 * `bub ui` of the installed package answers a tape name it cannot hold (a percent-encoded
 * `/` or `\`, a NUL, a name too long for a file, a traversal) with its 404 page, like an
 * unknown one, on the session page, its live events and its spilled output; never a 500.
 * Requests go over raw HTTP so the path reaches the server exactly as written.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cleanEnv, installedPackage, tempHome } from "./support/installed.ts";

/** Starts the installed `bub ui --port 0`; its port and token from the URL it prints. */
async function startUi(bin: string, home: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number; token: string }> {
  const child = spawn(bin, ["ui", "--port", "0"], { cwd: home, env: cleanEnv(home, env), stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`bub ui printed no URL in 15 s: ${stdout}${stderr}`)), 15_000);
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const found = /bub ui: http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)/.exec(stdout);
      if (found) {
        clearTimeout(timer);
        resolve({ child, port: Number(found[1]), token: found[2]! });
      }
    });
    child.once("exit", (code) => reject(new Error(`bub ui exited (${code}): ${stderr}`)));
  });
}

/** GET `path` as written (no URL normalization), with the view's token cookie; status, type and body. */
function get(port: number, token: string, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { cookie: `bub_ui_${port}=${token}` } }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, type: String(response.headers["content-type"] ?? ""), body }));
      // An event stream that was (wrongly) opened would never end: its status is enough.
      if (String(response.headers["content-type"]).startsWith("text/event-stream")) {
        resolve({ status: response.statusCode ?? 0, type: "text/event-stream", body: "" });
        response.destroy();
      }
    });
    req.on("error", reject);
    req.end();
  });
}

describe("bub ui answers invalid tape names with 404 (installed package)", () => {
  let home: Awaited<ReturnType<typeof tempHome>>;
  let ui: { child: ChildProcess; port: number; token: string };
  before(async () => {
    const { bin } = await installedPackage();
    home = await tempHome();
    ui = await startUi(bin, home.path, { BUB_HOME: join(home.path, ".bub") });
  });
  after(async () => {
    if (ui && ui.child.exitCode === null) {
      const exited = new Promise((resolve) => ui.child.once("exit", resolve));
      ui.child.kill("SIGTERM");
      await exited;
    }
    await home.cleanup();
  });

  it("a name with an encoded '/', '\\', a NUL, 201 characters or a traversal: the not-found page, not a 500", async () => {
    // (`/s/%2E%2E` is not among them: URL parsing reads it as `/s/..`, which is `/`, the sessions list.)
    const names = ["a%2Fb", "a%5Cb", "%00", "x".repeat(201), "..%2F..%2Fetc%2Fpasswd", "nothing__here"];
    for (const name of names) {
      const page = await get(ui.port, ui.token, `/s/${name}`);
      assert.equal(page.status, 404, `/s/${name}: ${page.body}`);
      assert.match(page.type, /^text\/html/);
      assert.match(page.body, /<h1>No such session<\/h1>/, name);
      const events = await get(ui.port, ui.token, `/s/${name}/events`);
      assert.equal(events.status, 404, `/s/${name}/events`);
      const spill = await get(ui.port, ui.token, `/s/${name}/spill/0123456789abcdef`);
      assert.equal(spill.status, 404, `/s/${name}/spill: ${spill.body}`);
      assert.match(spill.body, /"error":"No (tape named|output was spilled)/);
    }
    // The view lives on: the sessions list still answers.
    assert.equal((await get(ui.port, ui.token, "/")).status, 200);
  });
});
