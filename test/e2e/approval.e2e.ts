/**
 * BUB_APPROVAL=ask with the installed binary: where nobody can answer (`bub run`, `bub chat`
 * with piped input) the model's bash call is not run and the model reads why and how to
 * allow it; the default (off) runs it; a value that is neither fails in one line.
 */
import assert from "node:assert/strict";
import { access, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const exists = (path: string) => access(path).then(() => true, () => false);

describe("approval for dangerous tools (installed package)", () => {
  let model: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    model = await startFakeOpenAI();
    home = await tempHome();
    await mkdir(join(home.path, ".bub"), { recursive: true });
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-test" };
  });
  after(() => Promise.all([model.close(), home.cleanup()]));

  /** The tool result the model read in its last request. */
  const lastToolResult = () => String(model.requests.at(-1)!.body.messages.findLast((message) => message.role === "tool")?.content);

  it("bub run with BUB_APPROVAL=ask: bash does not run, the model reads how to allow it", async () => {
    const marker = join(home.path, "ran-in-run");
    model.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: `touch ${marker}` }) }]), reply.text("I could not run it."));
    const run = await runBub(["run", "make a marker"], { home: home.path, env: { ...env, BUB_APPROVAL: "ask" } });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /I could not run it\./);
    assert.equal(await exists(marker), false, "the command did not run");
    assert.match(lastToolResult(), /bash: not run: this call needs the user's approval \(BUB_APPROVAL=ask\) and nobody can be asked here .*set BUB_APPROVAL=off/);
  });

  it("bub chat with piped input and `approval: ask` in config.yml: no prompt, the same denial", async () => {
    const marker = join(home.path, "ran-in-chat");
    await writeFile(join(home.path, ".bub", "config.yml"), "approval: ask\n");
    try {
      model.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: `touch ${marker}` }) }]), reply.text("Not allowed here."));
      const chat = await runBub(["chat"], { home: home.path, env, input: "make a marker\n" });
      assert.equal(chat.code, 0, chat.stdout + chat.stderr);
      assert.match(chat.stdout, /Not allowed here\./);
      assert.doesNotMatch(chat.stdout, /allow bash\?/);
      assert.equal(await exists(marker), false);
      assert.match(lastToolResult(), /nobody can be asked here \(the chat's input is not a terminal\); set BUB_APPROVAL=off/);
    } finally {
      await writeFile(join(home.path, ".bub", "config.yml"), "");
    }
  });

  it("off (the default) runs bash without asking; a value other than off or ask fails in one line", async () => {
    const marker = join(home.path, "ran-by-default");
    model.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: `touch ${marker} && echo made` }) }]), reply.text("Done."));
    const run = await runBub(["run", "make a marker"], { home: home.path, env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(await exists(marker), true);
    assert.equal(lastToolResult(), "made");

    const bad = await runBub(["run", "hi"], { home: home.path, env: { ...env, BUB_APPROVAL: "maybe" } });
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
    assert.match(bad.stderr, /^bub: .*BUB_APPROVAL/);
  });
});
