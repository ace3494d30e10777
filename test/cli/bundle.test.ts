// The built `bub` binary: the esbuild bundle (package.json "bin"), built into a temp package
// root whose package.json, node_modules and skills/ link to this checkout's.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { open, readdir, readFile, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { reply, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/temp.ts";
import { bundleCli } from "../../scripts/bundle-cli.mjs";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));

// A plugin that adds a command and checks that `import "bub-ts"` gives it the CLI's own classes.
const PROBE_PLUGIN = `import { BubFramework, definePlugin } from "bub-ts";
export default (framework) => definePlugin({
  name: "probe",
  registerCliCommands({ app }) {
    app.command("probe").description("a command added by a plugin").action(() => {
      process.stdout.write("shares the host's classes: " + (framework instanceof BubFramework) + "\\n");
    });
  },
});
`;

// Records every module URL the process loads (printed to stderr at exit).
const TRACE = `import { registerHooks } from "node:module";
const seen = [];
registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } });
process.on("exit", () => process.stderr.write("loaded: " + JSON.stringify(seen) + "\\nbuiltins: " + JSON.stringify(process.moduleLoadList.filter((name) => name.startsWith("NativeModule ")).map((name) => name.slice(13))) + "\\n"));
`;

describe("the bundled bub binary", () => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  let bin: string;
  let work: string;

  before(async () => {
    root = await tempDir("bub-bundle-");
    for (const name of ["package.json", "node_modules", "skills"]) await symlink(join(repo, name), join(root.path, name));
    bin = await bundleCli({ outdir: join(root.path, "dist", "bin") });
    work = join(root.path, "work");
    await mkdir(work);
    await writeFile(join(root.path, "probe-plugin.js"), PROBE_PLUGIN);
    await writeFile(join(root.path, "trace.mjs"), TRACE);
  });

  after(async () => {
    await root?.cleanup();
  });

  async function bub(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []) {
    const result = await run(process.execPath, [...nodeArgs, bin, ...args], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: work, BUB_HOME: join(work, ".bub"), ...env },
    });
    return result;
  }

  it("prints the package version for --version and -V", async () => {
    const { version } = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as { version: string };
    assert.equal((await bub(["--version"])).stdout, `${version}\n`);
    assert.equal((await bub(["-V"])).stdout, `${version}\n`);
    assert.equal((await bub(["-w", ".", "--version"])).stdout, `${version}\n`);
  });

  it("lists every builtin command and a command a BUB_PLUGINS plugin adds", async () => {
    const { stdout } = await bub(["--help"], { BUB_PLUGINS: join(root.path, "probe-plugin.js") });
    assert.match(stdout, /^Usage: bub \[options\] \[command\]/);
    for (const command of ["run", "chat", "install", "update", "uninstall", "plugins", "probe"]) {
      assert.match(stdout, new RegExp(`^  ${command} `, "m"), `--help lists ${command}`);
    }
  });

  it("writes the same help to a socket, a pipe and a file, and to /dev/null without failing", async () => {
    const piped = (await bub(["--help"])).stdout; // execFile gives the child a socket pair
    const env = { PATH: process.env.PATH, HOME: work, BUB_HOME: join(work, ".bub"), NODE: process.execPath, BIN: bin };
    assert.equal((await run("sh", ["-c", '"$NODE" "$BIN" --help | cat'], { cwd: work, env })).stdout, piped);
    const file = join(root.path, "help.txt");
    const handle = await open(file, "w");
    try {
      const child = spawn(process.execPath, [bin, "--help"], { cwd: work, env: { PATH: process.env.PATH, HOME: work, BUB_HOME: join(work, ".bub") }, stdio: ["ignore", handle.fd, "inherit"] });
      const [code] = (await once(child, "exit")) as [number];
      assert.equal(code, 0);
    } finally {
      await handle.close();
    }
    assert.equal(await readFile(file, "utf8"), piped);
    const toNull = spawn(process.execPath, [bin, "--help"], { cwd: work, env: { PATH: process.env.PATH, HOME: work, BUB_HOME: join(work, ".bub") }, stdio: ["ignore", "ignore", "inherit"] });
    assert.deepEqual(await once(toNull, "exit"), [0, null]);
  });

  it("runs the plugin's command, the plugin's `bub-ts` being the bundle's own library", async () => {
    const { stdout } = await bub(["probe"], { BUB_PLUGINS: join(root.path, "probe-plugin.js") });
    assert.equal(stdout, "shares the host's classes: true\n");
  });

  it("finds the bundled skills next to the package", async () => {
    const { stdout } = await bub(["run", ",skill"]);
    assert.match(stdout, /- skill-creator/);
  });

  it("runs a shell command and a sqlite tape store through the lazily loaded builtins", async () => {
    const { stdout } = await bub(["run", ",bash cmd='echo from-a-shell'"], { BUB_TAPE_STORE: "sqlite" });
    assert.match(stdout, /from-a-shell/);
  });

  it("does not load the AI SDK, grammY, markdown rendering or zod for --help", async () => {
    const { stderr } = await bub(["--help"], {}, ["--import", join(root.path, "trace.mjs")]);
    const loaded = JSON.parse(/^loaded: (.*)$/m.exec(stderr)![1]!) as string[];
    assert.ok(loaded.some((url) => url.endsWith("/dist/bin/bub.js")));
    for (const unwanted of ["/node_modules/ai/", "/node_modules/@ai-sdk/", "/node_modules/grammy/", "/node_modules/marked", "/node_modules/zod/"]) {
      assert.deepEqual(
        loaded.filter((url) => url.includes(unwanted)),
        [],
        `--help loads ${unwanted}`,
      );
    }
    assert.ok(loaded.filter((url) => url.startsWith("file:")).length <= 20, `--help loads ${loaded.length} files`);
  });

  it("runs a model turn over its own HTTP client (no undici or node:http), without crypto, child_process, fs/promises or perf_hooks, reading skill frontmatter without the YAML package", async () => {
    const server = await startFakeOpenAI();
    try {
      server.script(reply.toolCalls([{ name: "fs_read", arguments: '{"path":"notes.txt"}' }]), reply.text("They say: buy milk."));
      await writeFile(join(work, "notes.txt"), "buy milk\n");
      const env = { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test" };
      const { stdout, stderr } = await bub(["run", "what do my notes say?"], env, ["--import", join(root.path, "trace.mjs")]);
      assert.equal(stdout, "[cli:local]\nThey say: buy milk.\n");
      assert.equal(server.requests.length, 2);
      const builtins = JSON.parse(/^builtins: (.*)$/m.exec(stderr)![1]!) as string[];
      assert.deepEqual(builtins.filter((name) => name.includes("undici") || name === "http" || name === "_http_client"), [], "the model call went through src/llm/http1.ts");
      // Loaded on first use only: nothing in this turn needs a random id, a hash from crypto, a
      // child process, the promise file API or performance timers.
      assert.deepEqual(builtins.filter((name) => ["crypto", "child_process", "fs/promises", "perf_hooks"].includes(name)), []);
      const loaded = JSON.parse(/^loaded: (.*)$/m.exec(stderr)![1]!) as string[];
      assert.deepEqual(loaded.filter((url) => url.includes("/node_modules/yaml/")), [], "skill frontmatter needed the full YAML parser");
    } finally {
      await server.close();
    }
  });

  it("bundles only the parts of zod the code uses", async () => {
    const files = await readdir(join(root.path, "dist", "bin"));
    const code = await Promise.all(files.filter((file) => file.endsWith(".js")).map((file) => readFile(join(root.path, "dist", "bin", file), "utf8")));
    const zodChunk = code.find((text) => text.includes("$ZodObject"));
    assert.ok(zodChunk, "no chunk holds zod");
    // Members nothing calls (z.fromJSONSchema, z.templateLiteral, z.file) are left out.
    for (const unused of ["fromJSONSchema", "ZodTemplateLiteral", "ZodFile"]) assert.ok(!zodChunk.includes(unused), `zod's ${unused} is bundled`);
    // What is used works: a tool's arguments are validated and the bundled schemas load.
    await writeFile(join(work, "zod-check.txt"), "validated\n");
    const { stdout } = await bub(["run", ",fs.read path=zod-check.txt offset=0"]);
    assert.match(stdout, /validated/);
  });
});
