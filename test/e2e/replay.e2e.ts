/**
 * `bub replay` and `bub tape export --format atif|cloudevents` on the installed binary: a
 * three-turn session with a tool call recorded against one fake OpenAI-compatible server,
 * replayed against a second one that answers differently.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../support/fake-openai.ts";
import { atifProblems, checkCloudEvent } from "../support/atif-schema.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { startBub } from "./support/live.ts";
import { eventually } from "../support/eventually.ts";

type Json = Record<string, any>;

/** The second model: other words, the same tool call written differently, then a write and a shell command of its own. */
function secondModel(): FakeReply[] {
  return [
    reply.text("Hi there! What can I do for you?", { usage: { prompt_tokens: 40, completion_tokens: 9 } }),
    reply.toolCalls([{ id: "call_again", name: "fs_read", arguments: '{ "path": "notes.txt" }' }], { usage: { prompt_tokens: 90, completion_tokens: 11 } }),
    reply.text("Your notes say: buy milk.", { usage: { prompt_tokens: 100, completion_tokens: 7 } }),
    reply.toolCalls(
      [
        { id: "call_write", name: "fs_write", arguments: '{"path":"notes.txt","content":"written by the replay"}' },
        { id: "call_shell", name: "bash", arguments: '{"cmd":"touch shell-ran"}' },
      ],
      { usage: { prompt_tokens: 90, completion_tokens: 11 } },
    ),
    reply.text("Bye now.", { usage: { prompt_tokens: 130, completion_tokens: 3 } }),
  ];
}

describe("bub replay and the trajectory exports (installed package)", () => {
  let first: FakeOpenAI;
  let second: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let tapes: string;
  const originalBytes = new Map<string, Buffer>();

  before(async () => {
    await installedPackage();
    [first, second] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
    home = await tempHome();
    tapes = join(home.path, ".bub", "tapes");
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "first:small-model", BUB_FIRST_API_BASE: first.url, BUB_SECOND_API_BASE: second.url };
    await writeFile(join(home.path, "notes.txt"), "buy milk\n");
    first.script(
      reply.text("Hello! How can I help?", { usage: { prompt_tokens: 50, completion_tokens: 6 } }),
      reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
      reply.text("The notes say: buy milk.", { usage: { prompt_tokens: 120, completion_tokens: 8 } }),
      reply.text("Bye now.", { usage: { prompt_tokens: 130, completion_tokens: 3 } }),
    );
    for (const message of ["hello", "what do my notes say?", "bye"]) {
      const run = await runBub(["run", message], { home: home.path, env });
      assert.equal(run.code, 0, run.stderr);
    }
    // The file changes after the recording: a reused result still says what was recorded.
    await writeFile(join(home.path, "notes.txt"), "changed since\n");
    for (const name of await readdir(tapes)) if (name.endsWith(".jsonl") && !name.startsWith(".")) originalBytes.set(name, await readFile(join(tapes, name)));
    assert.equal(originalBytes.size, 1);
  });
  after(async () => {
    await Promise.all([first.close(), second.close()]);
    await home.cleanup();
  });

  it("prints each turn side by side: the word diff of the answers, reused, run and refused tool calls, tokens and totals", async () => {
    second.script(...secondModel());
    const result = await runBub(["replay", "cli:local", "--model", "second:other-model"], { home: home.path, env, timeoutMs: 60_000 });
    assert.equal(result.code, 0, result.stderr);
    const out = result.stdout;
    assert.match(out, /^Replay of cli:local \(tape [0-9a-f]{16}__[0-9a-f]{16}\)\n {2}replay session cli:local\/replay-\d{8}T\d{9}Z /);
    assert.match(out, /\nTurn 1 · hello\n/);
    assert.match(out, /\n {2}model +first:small-model +second:other-model\n/);
    assert.match(out, /\n {4}\[-Hello-\]\{\+Hi there\+\}! \[-How-\]\{\+What\+\} can I \[-help-\]\{\+do for you\+\}\?\n/);
    assert.match(out, /\nTurn 2 · what do my notes say\?\n/);
    assert.match(out, /\n {2}tool calls +fs_read \{"path":"notes.txt"\} +\[reused\] fs_read \{ "path": "notes.txt" \}\n/);
    assert.match(out, /\n {2}tokens +220 in \/ 18 out +190 in \/ 18 out\n/);
    assert.match(out, /\n {4}\[-The-\]\{\+Your\+\} notes say: buy milk\.\n/);
    assert.match(out, /\[run\] fs_write/);
    assert.match(out, /\[refused\] bash/);
    assert.match(out, /\n {2}answer \(the same on both sides\)\n {4}Bye now\.\n/);
    assert.match(out, /\nTotals · 3 turns, 1 with the same answer\n/);
    assert.match(out, /\n {2}tool calls +1 +3 \(1 reused\)\n/);
    assert.match(out, /\n {2}cost +— +—\n/);
    // The second model read the recorded result, not the file as it is now.
    const toolMessage = second.requests[2]!.body.messages.find((message: Json) => message.role === "tool");
    assert.equal(toolMessage?.content, "buy milk");
    // The write went to the scratch copy, the shell command was refused.
    assert.equal(await readFile(join(home.path, "notes.txt"), "utf8"), "changed since\n");
    await assert.rejects(readFile(join(home.path, "shell-ran")));
    const refused = second.requests[4]!.body.messages.filter((message: Json) => message.role === "tool").map((message: Json) => String(message.content));
    assert.ok(refused.some((content) => content.includes("bash is off in this replay")), refused.join("\n"));
  });

  it("leaves the original tape as it was, byte for byte, and lists the replay next to it", async () => {
    for (const [name, bytes] of originalBytes) assert.ok((await readFile(join(tapes, name))).equals(bytes), `${name} changed`);
    const list = await runBub(["tape", "list", "--json"], { home: home.path, env });
    assert.equal(list.code, 0, list.stderr);
    const rows = JSON.parse(list.stdout) as Json[];
    const workspace = await realpath(home.path);
    const replays = rows.filter((row) => /^cli:local\/replay-\d{8}T\d{9}Z$/.test(String(row.session_id)));
    assert.ok(replays.length >= 1, list.stdout);
    assert.ok(rows.some((row) => row.session_id === "cli:local" && row.workspace === workspace));
    for (const row of replays) {
      assert.equal(row.workspace, workspace);
      assert.equal(row.turns, 3);
    }
  });

  it("--json: the comparison for scripts", async () => {
    second.script(...secondModel());
    const result = await runBub(["replay", "cli:local", "--model", "second:other-model", "--json"], { home: home.path, env, timeoutMs: 60_000 });
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as Json;
    assert.equal(report.original.session_id, "cli:local");
    assert.match(report.replay.session_id, /^cli:local\/replay-\d{8}T\d{9}Z$/);
    assert.deepEqual({ model: report.replay.model, plugins: report.replay.plugins, live: report.replay.live, scratch: report.replay.scratch }, { model: "second:other-model", plugins: [], live: false, scratch: null });
    assert.deepEqual(report.turns.map((turn: Json) => [turn.number, turn.prompt, turn.same_answer]), [
      [1, "hello", false],
      [2, "what do my notes say?", false],
      [3, "bye", true],
    ]);
    const turn = report.turns[1];
    assert.deepEqual(turn.diff, [
      { op: "removed", text: "The" },
      { op: "added", text: "Your" },
      { op: "equal", text: " notes say: buy milk." },
    ]);
    assert.deepEqual(turn.original.tool_calls, [{ name: "fs_read", arguments: '{"path":"notes.txt"}' }]);
    assert.deepEqual(turn.replay.tool_calls, [{ name: "fs_read", arguments: '{ "path": "notes.txt" }', source: "reused" }]);
    assert.deepEqual(
      { answer: turn.replay.answer, models: turn.replay.models, model_calls: turn.replay.model_calls, prompt_tokens: turn.replay.prompt_tokens, completion_tokens: turn.replay.completion_tokens, cost_usd: turn.replay.cost_usd },
      { answer: "Your notes say: buy milk.", models: ["second:other-model"], model_calls: 2, prompt_tokens: 190, completion_tokens: 18, cost_usd: null },
    );
    assert.equal(typeof turn.replay.latency_ms, "number");
    assert.deepEqual(report.turns[2].replay.tool_calls.map((call: Json) => call.source), ["run", "refused"]);
    assert.deepEqual(report.totals.original, { turns: 3, model_calls: 4, tool_calls: 1, reused_tool_calls: 0, prompt_tokens: 400, completion_tokens: 27, cost_usd: null, latency_ms: report.totals.original.latency_ms });
    assert.deepEqual({ ...report.totals.replay, latency_ms: 0 }, { turns: 3, model_calls: 5, tool_calls: 3, reused_tool_calls: 1, prompt_tokens: 450, completion_tokens: 41, cost_usd: null, latency_ms: 0 });
  });

  it("--plugins: the replay runs with another plugin set; one that does not load stops it before any turn, exit 1", async () => {
    // Outside the workspace: a plugin file inside an untrusted workspace would not load.
    const dir = await mkdtemp(join(tmpdir(), "bub-replay-plugin-"));
    try {
      const plugin = join(dir, "canned.mjs");
      await writeFile(plugin, 'export default { name: "canned", beforeLlmCall: () => ({ action: "finish", text: "A canned answer." }) };\n');
      const asked = second.requests.length;
      const result = await runBub(["replay", "cli:local", "--plugins", plugin, "--json"], { home: home.path, env, timeoutMs: 60_000 });
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as Json;
      assert.deepEqual(report.replay.plugins, [plugin]);
      assert.deepEqual(report.turns.map((turn: Json) => turn.replay.answer), ["A canned answer.", "A canned answer.", "A canned answer."]);
      assert.equal(second.requests.length, asked);
      const broken = await runBub(["replay", "cli:local", "--plugins", join(dir, "missing.mjs")], { home: home.path, env });
      assert.equal(broken.code, 1);
      assert.equal(broken.stdout, "");
      // As with `bub run`: the loader's warning, then the one line that stops the command.
      assert.match(broken.stderr, /^bub: plugin 'missing' \(.*missing\.mjs\) listed in BUB_PLUGINS or config\.yml did not load: .* — fix it, or take it out of BUB_PLUGINS \(or plugins: in config\.yml\)\n$/m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("Ctrl-C stops the running turn, starts no other, compares what ran and exits 130", async () => {
    second.script(reply.text("Hi there! What can I do for you?", { usage: { prompt_tokens: 40, completion_tokens: 9 } }), reply.hang());
    const asked = second.requests.length;
    const live = await startBub(["replay", "cli:local", "--model", "second:other-model", "--json"], { home: home.path, env });
    try {
      await eventually(() => (second.requests.length === asked + 2 ? true : undefined), "the second turn's model call");
      live.child.kill("SIGINT");
      const result = await live.exited(30_000);
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /^bub: interrupted \(SIGINT\) — the replay stopped; the turns that ran are compared above and kept on its tape\n$/m);
      const report = JSON.parse(result.stdout) as Json;
      assert.equal(report.turns[0].replay.answer, "Hi there! What can I do for you?");
      assert.equal(report.turns[2].replay, null);
      assert.equal(second.requests.length, asked + 2);
    } finally {
      live.kill();
    }
  });

  it("says what to do for a session it does not know, exit 1", async () => {
    const result = await runBub(["replay", "cli:nobody", "--model", "second:other-model"], { home: home.path, env });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.equal(result.stderr, 'bub: No tape for session "cli:nobody" — run `bub tape list` to see the sessions and their tape names\n');
  });

  it("exports the session as an ATIF trajectory that the published schema accepts", async () => {
    const result = await runBub(["tape", "export", "cli:local", "--format", "atif"], { home: home.path, env });
    assert.equal(result.code, 0, result.stderr);
    const trajectory = JSON.parse(result.stdout) as Json;
    assert.deepEqual(atifProblems(trajectory), []);
    assert.equal(trajectory.session_id, "cli:local");
    assert.equal(trajectory.agent.name, "bub");
    assert.equal(trajectory.agent.model_name, "first:small-model");
    const users = trajectory.steps.filter((step: Json) => step.source === "user").map((step: Json) => step.message);
    assert.deepEqual(users.filter((message: string) => !message.startsWith("Continue the task")), ["hello", "what do my notes say?", "bye"]);
    const withTool = trajectory.steps.find((step: Json) => step.tool_calls);
    assert.deepEqual(withTool.tool_calls, [{ tool_call_id: "call_notes", function_name: "fs_read", arguments: { path: "notes.txt" } }]);
    assert.deepEqual(withTool.observation, { results: [{ source_call_id: "call_notes", content: "buy milk" }] });
    assert.deepEqual(
      trajectory.steps.filter((step: Json) => step.source === "agent").map((step: Json) => step.message),
      ["Hello! How can I help?", "", "The notes say: buy milk.", "Bye now."],
    );
    assert.deepEqual({ ...trajectory.final_metrics, total_steps: 0 }, { total_steps: 0, total_prompt_tokens: 400, total_completion_tokens: 27 });
  });

  it("exports the session as CloudEvents, one per trajectory step", async () => {
    const [events, atif] = await Promise.all([
      runBub(["tape", "export", "cli:local", "--format", "cloudevents"], { home: home.path, env }),
      runBub(["tape", "export", "cli:local", "--format", "atif"], { home: home.path, env }),
    ]);
    assert.equal(events.code, 0, events.stderr);
    const lines = events.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Json);
    const steps = (JSON.parse(atif.stdout) as Json).steps as Json[];
    assert.equal(lines.length, steps.length);
    for (const [index, event] of lines.entries()) {
      checkCloudEvent(event);
      assert.equal(event.specversion, "1.0");
      assert.equal(event.type, "bub.tape.step");
      assert.match(event.source, /^\/bub\/tapes\/[0-9a-f]{16}__[0-9a-f]{16}$/);
      assert.equal(event.subject, "cli:local");
      assert.equal(event.id, `${event.source.slice("/bub/tapes/".length)}/${index + 1}`);
      assert.deepEqual(event.data, steps[index]);
    }
  });

  it("keeps the default export format, and names the four formats for an unknown one", async () => {
    const jsonl = await runBub(["tape", "export", "cli:local"], { home: home.path, env });
    const [name] = originalBytes.keys();
    assert.equal(jsonl.stdout, originalBytes.get(name!)!.toString("utf8"));
    // After every replay above, the original tape is still byte for byte what the runs wrote.
    for (const [file, bytes] of originalBytes) assert.ok((await readFile(join(tapes, file))).equals(bytes), `${file} changed`);
    const bad = await runBub(["tape", "export", "cli:local", "--format", "xml"], { home: home.path, env });
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, 'bub: Unknown export format "xml" — use --format jsonl, markdown, atif or cloudevents\n');
  });
});
