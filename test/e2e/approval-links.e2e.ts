/**
 * BUB_APPROVAL=ask against symbolic links, with the installed binary: a link in the
 * workspace whose target outside it does not exist yet (directly, through a chain of
 * links, or through a linked folder) is judged by where it points, so `bub run`, where
 * nobody can be asked, refuses the write and the outside file is never created. A link
 * loop is refused with one clear tool error.
 */
import assert from "node:assert/strict";
import { access, mkdir, readdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const exists = (path: string) => access(path).then(() => true, () => false);

describe("approval judges symbolic links by their targets (installed package)", () => {
  let model: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let workspace: string;
  let outside: string;
  let runs = 0;
  before(async () => {
    await installedPackage();
    model = await startFakeOpenAI();
    home = await tempHome();
    await mkdir(join(home.path, ".bub"), { recursive: true });
    workspace = join(home.path, "ws");
    outside = join(home.path, "outside");
    await mkdir(workspace);
    await mkdir(outside);
    // notes.txt -> an outside file that does not exist yet (absolute target)
    await symlink(join(outside, "new.txt"), join(workspace, "notes.txt"));
    // hop1 -> hop2 -> ../outside/chain.txt (relative targets, resolved from the link's folder)
    await symlink("hop2", join(workspace, "hop1"));
    await symlink(join("..", "outside", "chain.txt"), join(workspace, "hop2"));
    // dirlink -> the outside folder; dirlink/deep.txt does not exist
    await symlink(outside, join(workspace, "dirlink"));
    // a folder link whose target folder does not exist either: gone/x.txt -> outside/later/x.txt
    await symlink(join(outside, "later"), join(workspace, "gone"));
    // loopA -> loopB -> loopA
    await symlink("loopB", join(workspace, "loopA"));
    await symlink("loopA", join(workspace, "loopB"));
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-test", BUB_APPROVAL: "ask" };
  });
  after(() => Promise.all([model.close(), home.cleanup()]));

  /** The tool results the model read in its last request. */
  const toolResults = () => model.requests.at(-1)!.body.messages.filter((message) => message.role === "tool").map((message) => String(message.content));

  /** `bub run` in the workspace where the model calls `tool` once per path; the tool results it read. */
  async function writeThrough(tool: "fs.write" | "fs.edit", paths: readonly string[]): Promise<string[]> {
    const name = tool.replace(".", "_");
    const args = (path: string) => (tool === "fs.write" ? { path, content: "pwned" } : { path, old: "a", new: "b" });
    model.script(reply.toolCalls(paths.map((path) => ({ name, arguments: JSON.stringify(args(path)) }))), reply.text("Done."));
    const run = await runBub(["run", "--session-id", `links-${++runs}`, "write the notes"], { home: home.path, cwd: workspace, env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const results = toolResults();
    assert.equal(results.length, paths.length, results.join("\n"));
    return results;
  }

  it("fs.write through a dangling link, a chain of links and a linked folder is denied; nothing is created outside", async () => {
    const results = await writeThrough("fs.write", ["notes.txt", "hop1", "dirlink/deep.txt", "gone/x.txt"]);
    for (const result of results) {
      assert.match(result, /fs_write: not run: this call needs the user's approval \(BUB_APPROVAL=ask\) and nobody can be asked here/);
    }
    assert.deepEqual(await readdir(outside), [], "nothing was written outside the workspace");
    assert.equal(await exists(join(outside, "later")), false);
  });

  it("fs.edit through the same links is denied too", async () => {
    const results = await writeThrough("fs.edit", ["notes.txt", "hop1"]);
    for (const result of results) assert.match(result, /fs_edit: not run: this call needs the user's approval/);
    assert.deepEqual(await readdir(outside), []);
  });

  it("a link loop is refused with one clear error, and nothing is written", async () => {
    const [result] = await writeThrough("fs.write", ["loopA"]);
    assert.match(result!, /too many levels of symbolic links/);
    assert.match(result!, /loopA/);
    assert.deepEqual(await readdir(outside), []);
  });
});
