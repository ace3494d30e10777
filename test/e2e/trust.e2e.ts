/**
 * Workspace trust with the installed binary: a freshly cloned folder whose package.json
 * declares a plugin and whose .env points BUB_API_BASE at another server runs none of it
 * until `bub trust`, and is untrusted again once its package.json changes.
 */
import assert from "node:assert/strict";
import { access, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const exists = (path: string) => access(path).then(() => true, () => false);

describe("workspace trust (installed package)", () => {
  let real: FakeOpenAI;
  let other: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let ws: string;
  let marker: string;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    [real, other] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
    home = await tempHome();
    ws = join(home.path, "clone");
    marker = join(ws, "plugin-loaded");
    await mkdir(ws);
    await writeFile(join(ws, "package.json"), `${JSON.stringify({ name: "clone", private: true, bub: { plugins: { marker: "./marker.mjs" } } }, null, 2)}\n`);
    await writeFile(join(ws, "marker.mjs"), `import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("./plugin-loaded", import.meta.url), "loaded\\n");\nexport default { name: "marker" };\n`);
    await writeFile(join(ws, ".env"), `BUB_API_BASE=${other.url}\n`);
    const bubHome = join(home.path, ".bub");
    await mkdir(bubHome);
    // The user's own config names the real server; an untrusted .env must not override it.
    await writeFile(join(bubHome, "config.yml"), `api_base: ${real.url}\n`);
    env = { BUB_HOME: bubHome, BUB_MODEL: "local:any", BUB_API_KEY: "sk-user-secret" };
  });
  after(() => Promise.all([real.close(), other.close(), home.cleanup()]));

  const notice = (path: string) => `bub: this folder is not trusted, so its package.json plugins and .env were not loaded — run \`bub trust\` to trust ${path}\n`;

  it("loads neither the plugin nor the .env of an untrusted folder, with one line saying so", async () => {
    const hooks = await runBub(["hooks"], { home: home.path, cwd: ws, env });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.equal(hooks.stderr, notice(ws));
    assert.equal(await exists(marker), false, "the workspace plugin did not run");

    real.script(reply.text("Hello from the real server."));
    const run = await runBub(["run", "hello"], { home: home.path, cwd: ws, env: { ...env, BUB_API_BASE: real.url } });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /Hello from the real server\./);
    assert.equal(run.stderr, notice(ws));
    assert.equal(await exists(marker), false);

    real.script(reply.text("Config server answers."));
    const configured = await runBub(["run", "hello"], { home: home.path, cwd: ws, env });
    assert.equal(configured.code, 0, configured.stdout + configured.stderr);
    assert.match(configured.stdout, /Config server answers\./);
    assert.equal(other.requests.length, 0, "the .env's server got no request (and no API key)");
    assert.equal(real.requests.length, 2);
    assert.equal(real.pending(), 0);
  });

  it("loads both after `bub trust`, and is untrusted again once package.json changes", async () => {
    const trust = await runBub(["trust"], { home: home.path, cwd: ws, env });
    assert.equal(trust.code, 0, trust.stderr);
    assert.equal(trust.stderr, "");
    assert.match(trust.stdout, new RegExp(`^Trusted ${ws.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: its package.json and .env load from now on`));
    const list = await runBub(["trust", "--list"], { home: home.path, cwd: ws, env });
    assert.match(list.stdout, new RegExp(`^${ws.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}  trusted since `, "m"));

    const hooks = await runBub(["hooks"], { home: home.path, cwd: ws, env });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.equal(hooks.stderr, "");
    assert.equal(await exists(marker), true, "the workspace plugin ran");

    other.script(reply.text("The .env's server answers."));
    const run = await runBub(["run", "hello"], { home: home.path, cwd: ws, env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /The \.env's server answers\./, "a trusted .env applies");
    assert.equal(other.requests.length, 1);

    await rm(marker);
    await writeFile(join(ws, "package.json"), `${JSON.stringify({ name: "clone", private: true, bub: { plugins: { marker: "./marker.mjs", again: "./marker.mjs" } } }, null, 2)}\n`);
    const changed = await runBub(["hooks"], { home: home.path, cwd: ws, env });
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(changed.stderr, notice(ws));
    assert.equal(await exists(marker), false, "a changed package.json is untrusted again");

    const revoke = await runBub(["trust", "--revoke"], { home: home.path, cwd: ws, env });
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.equal(revoke.stdout, `No longer trusted: ${ws}\n`);
  });

  it("prints nothing in a folder with nothing to skip (the home folder itself)", async () => {
    const result = await runBub(["hooks"], { home: home.path, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "");
  });
});
