/**
 * `bub plugin new` on the installed package, offline: the scaffold's own test passes, it
 * type-checks against the shipped types (a context tool using the typed session tape among
 * them), packs, installs with `bub install`, shows its hook and (`bub plugins --tools`) its
 * tool, answers a turn with the tool, and uninstalls by plugin name.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { cleanEnv, installedPackage, runBub, tempHome } from "./support/installed.ts";
import { oldNode } from "./support/old-node.ts";

const execute = promisify(execFile);
const checkout = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Added to the scaffold's test/ folder (type-checked, not run, not packed): a context tool
 * that writes and searches the session tape and a hook reading it, through the shipped types.
 */
const TYPED_TAPE = `import { definePlugin, defineTool, z, type TapeEntry, type TapeHandle } from "bub-ts";

export const note = defineTool({
  name: "hello.note",
  parameters: z.object({ text: z.string() }),
  context: true,
  async run({ text }, { tape }) {
    const written: TapeEntry = await tape.appendEvent("note", { text }, { context: false });
    const found: TapeEntry[] = await tape.search({ tape: tape.name, text, kinds: ["event"] });
    // @ts-expect-error the handle is typed, not any: it has no such method
    tape.appendEvents("note");
    return \`\${written.id} \${found.length}\`;
  },
});

export const audit = definePlugin({
  afterToolCall: async ({ call, context }) => {
    const tape: TapeHandle | null = context.tape;
    await tape?.appendEvent("audit", { tool: call.tool });
  },
  buildPrompt: ({ message }) => {
    // @ts-expect-error the envelope is typed: a misspelt field does not compile
    void message.contnet;
    return message.content;
  },
});
`;

/**
 * Added beside it: keys of the plugin's own on the turn state, declared by merging into the
 * shipped `TurnState` (with the example of docs/plugins.md, which declares `visits.count`);
 * one nobody declared, or a write to a `_runtime_*` key, does not compile.
 */
const TYPED_STATE = `import { definePlugin, type TurnState } from "bub-ts";

declare module "bub-ts" {
  interface TurnState {
    "hello.greeted"?: string[];
  }
}

export const greeter = definePlugin({
  loadState: ({ message }) => ({ "hello.greeted": [message.chatId], model: "openai:gpt-4o" }),
  buildPrompt: ({ message, state }) => {
    const greeted: string[] = state["hello.greeted"] ?? [];
    const visits: number | undefined = state["visits.count"];
    const session: string | undefined = state.session_id;
    return \`\${message.content} \${greeted.length} \${visits ?? 0} \${session ?? ""}\`;
  },
});

export function undeclared(state: TurnState): void {
  // @ts-expect-error the state has no index signature: a key nobody declared does not compile
  void state["hello.nobody"];
  // @ts-expect-error the reference's _runtime_* keys are read-only
  state._runtime_workspace = "/elsewhere";
}

// @ts-expect-error a loadState answer of undeclared keys only does not compile
export const stray = definePlugin({ loadState: () => ({ "hello.nobody": 1 }) });
`;

/** The ```ts block of docs/plugins.md that contains `marker`. */
async function pluginsDocsBlock(marker: string): Promise<string> {
  const text = await readFile(new URL("../../docs/plugins.md", import.meta.url), "utf8");
  const block = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!).find((code) => code.includes(marker));
  assert.ok(block, `docs/plugins.md has a ts block with ${marker}`);
  return block;
}

describe("bub plugin new → npm test → npm pack → bub install → bub hooks (installed package, no registry)", () => {
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    home = await tempHome();
    // No registry answers: nothing in this flow may need one.
    env = { BUB_HOME: join(home.path, ".bub"), npm_config_registry: "http://127.0.0.1:9/", npm_config_update_notifier: "false", npm_config_audit: "false", npm_config_fund: "false" };
  });
  after(() => home.cleanup());

  it("writes a plugin package that tests, type-checks, packs, installs, answers and uninstalls", async () => {
    const created = await runBub(["plugin", "new", "hello"], { home: home.path, env });
    assert.equal(created.code, 0, created.stdout + created.stderr);
    assert.match(created.stdout, /^Wrote bub-plugin-hello: /);
    const dir = join(home.path, "bub-plugin-hello");
    const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as Record<string, any>;
    const { prefix } = await installedPackage();
    const { PLUGIN_API_VERSION } = (await import(join(prefix, "node_modules", "bub-ts", "dist", "index.js"))) as { PLUGIN_API_VERSION: string };
    assert.deepEqual(pkg.bub, { plugins: { hello: "./src/index.ts" }, api: `^${PLUGIN_API_VERSION}` });
    assert.match(pkg.peerDependencies["bub-ts"], /^\^\d+\.\d+\.\d+/);

    const shell = { cwd: dir, env: { ...cleanEnv(home.path, env), PATH: process.env.PATH ?? "" } };
    const test = await execute("npm", ["test"], shell);
    assert.match(test.stdout, /ℹ pass 2\n/);
    assert.match(test.stdout, /ℹ fail 0\n/);
    assert.equal(pkg.engines?.node, ">=22.19");
    const old = await oldNode();
    if (old) {
      // On an older Node.js, `npm test` says in one line what it needs instead of a glob error.
      const failed = await execute("npm", ["test"], { ...shell, env: { ...shell.env, PATH: `${dirname(old.path)}:${shell.env.PATH}` } }).then(
        () => null,
        (error: { stderr: string }) => error,
      );
      assert.ok(failed, `npm test passed on Node.js ${old.version}`);
      assert.match(failed.stderr, new RegExp(`npm test needs Node.js 22.19 or newer; this is v${old.version.replaceAll(".", "\\.")}\\. .*npx -y -p node@24 npm test`));
      assert.doesNotMatch(failed.stderr, /Could not find/);
    }

    // The compiler is not in the scaffold (it would need the registry): the checkout's, with its @types/node.
    await writeFile(join(dir, "test", "typed-tape.ts"), TYPED_TAPE);
    await writeFile(join(dir, "test", "typed-state.ts"), TYPED_STATE);
    await writeFile(join(dir, "test", "visits.ts"), await pluginsDocsBlock('name: "visits"'));
    await execute(join(checkout, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json", "--typeRoots", join(checkout, "node_modules", "@types")], shell).catch((error: { stdout?: string }) => {
      assert.fail(`the scaffold does not type-check against the shipped types:\n${error.stdout}`);
    });

    const packed = await execute("npm", ["pack", "--silent"], shell);
    const tarball = join(dir, packed.stdout.trim().split("\n").at(-1)!);
    assert.equal(tarball, join(dir, "bub-plugin-hello-0.1.0.tgz"));

    const install = await runBub(["install", tarball], { home: home.path, env, timeoutMs: 120_000 });
    assert.equal(install.code, 0, install.stdout + install.stderr);
    assert.match(install.stdout, /^Plugins: hello \(bub-plugin-hello\)$/m);

    const hooks = await runBub(["hooks"], { home: home.path, env });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.match(hooks.stdout, /^systemPrompt: hello, builtin$/m);
    assert.doesNotMatch(hooks.stdout, /Failed plugins/);

    const plugins = await runBub(["plugins", "--tools"], { home: home.path, env });
    assert.equal(plugins.code, 0, plugins.stderr);
    assert.match(plugins.stdout, /^ {2}hello: hello\.greet$/m);

    const turn = await runBub(["run", ",hello.greet name=Ada"], { home: home.path, env });
    assert.equal(turn.code, 0, turn.stderr);
    assert.equal(turn.stdout, "[cli:local]\nHello, Ada!\n");

    const uninstall = await runBub(["uninstall", "hello"], { home: home.path, env, timeoutMs: 120_000 });
    assert.equal(uninstall.code, 0, uninstall.stdout + uninstall.stderr);
    const after = await runBub(["hooks"], { home: home.path, env });
    assert.doesNotMatch(after.stdout, /hello/);
  });

  it("refuses a name that is not a plugin name, and a folder that is not empty, exit 1", async () => {
    const bad = await runBub(["plugin", "new", "Hello World"], { home: home.path, env });
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, "bub: 'Hello World' is not a plugin name — use lower-case letters, digits and dashes, starting with a letter (e.g. 'weather')\n");
    await runBub(["plugin", "new", "twice"], { home: home.path, env });
    const again = await runBub(["plugin", "new", "twice"], { home: home.path, env });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^bub: .*bub-plugin-twice already exists and is not empty — choose another folder with --dir, or remove it\n$/);
  });

  it("declares @types/node, which its shipped declarations need, as an optional peer dependency", async () => {
    const root = join((await installedPackage()).prefix, "node_modules", "bub-ts");
    const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as Record<string, any>;
    const declarations = (await readdir(join(root, "dist"), { recursive: true })).filter((path) => path.endsWith(".d.ts"));
    let nodeTypes = 0;
    for (const path of declarations) if (/\bNodeJS\.|from "node:/.test(await readFile(join(root, "dist", path), "utf8"))) nodeTypes++;
    assert.ok(nodeTypes > 0, "the declarations use Node's types (else the peer dependency is not needed)");
    assert.match(pkg.peerDependencies?.["@types/node"] ?? "", /^>=\d+/);
    assert.deepEqual(pkg.peerDependenciesMeta?.["@types/node"], { optional: true });
  });
});
