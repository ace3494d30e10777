/**
 * `bub plugin new <name>`: writes a plugin package that works as written — package.json
 * with the `bub` field (its plugin and the plugin API range it supports) and `bub-ts` as
 * its peer, an ES module TypeScript source with one tool and one hook, a test on `bub-ts/testing`, a tsconfig for the shipped types, a README.
 * `bub-ts` comes from the running installation (a local stand-in package linked into
 * node_modules), so `npm test` and `npm pack` need no registry.
 */
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { runningPackage, type RuntimePackage } from "./plugin-project.ts";
import { packageJsonOf } from "../../plugins/discovery.ts";
import { PLUGIN_API_VERSION } from "../../kernel/plugin-api.ts";

/** What `bub plugin new` is asked for. */
export interface PluginNewOptions {
  /** Folder to write (default `./bub-plugin-<name>`). */
  dir?: string;
}

/** A plugin name: lower-case letters, digits and dashes, starting with a letter. */
const NAME = /^[a-z][a-z0-9-]*$/;

/** The names a scaffold uses for `name` (`hello` or `bub-plugin-hello`). */
export function scaffoldNames(name: string): { plugin: string; packageName: string; tool: string } {
  const plugin = name.replace(/^bub-plugin-/, "");
  if (!NAME.test(plugin)) throw new Error(`'${name}' is not a plugin name. Use lower-case letters, digits and dashes, starting with a letter (e.g. 'weather').`);
  return { plugin, packageName: `bub-plugin-${plugin}`, tool: `${plugin.replace(/-/g, "_")}.greet` };
}

/** The running copy's files a stand-in re-exports: its library and testing entries, as URLs and as paths for types. */
function runtimeEntries(runtime: RuntimePackage): { index: string; testing: string; indexTypes: string; testingTypes: string } {
  const index = new URL(runtime.entry);
  const testing = new URL(index.pathname.endsWith(".ts") ? "testing.ts" : "testing.js", index);
  return { index: index.href, testing: testing.href, indexTypes: fileURLToPath(index), testingTypes: fileURLToPath(testing) };
}

/** Versions for the type-checking dev dependencies: the running copy's own, else any. */
async function devVersions(runtime: RuntimePackage): Promise<{ typescript: string; node: string }> {
  try {
    const dev = packageJsonOf(JSON.parse(await readFile(join(runtime.root, "package.json"), "utf8")))?.devDependencies;
    const version = (value: unknown) => (typeof value === "string" ? value : "*");
    return { typescript: version(dev?.typescript), node: version(dev?.["@types/node"]) };
  } catch {
    return { typescript: "*", node: "*" };
  }
}

/** The scaffold's `pretest`: stops `npm test` on a Node.js older than 22.19 with one line saying what to do. */
const NODE_CHECK =
  "node -e \"const [a, b] = process.versions.node.split('.').map(Number); if (a < 22 || (a === 22 && b < 19)) { console.error('npm test needs Node.js 22.19 or newer; this is ' + process.version + '. Install a newer Node.js, or run: npx -y -p node@24 npm test'); process.exit(1); }\"";

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Every file of the scaffold, by path relative to its folder. */
export async function scaffoldFiles(name: string, runtime: RuntimePackage): Promise<Record<string, string>> {
  const { plugin, packageName, tool } = scaffoldNames(name);
  const entries = runtimeEntries(runtime);
  const versions = await devVersions(runtime);
  const modelTool = tool.replace(/\./g, "_");
  const standIn = `// Stands in for the bub-ts at ${runtime.root} while you develop; \`bub plugin new\` wrote it.\n`;
  return {
    "package.json": json({
      name: packageName,
      version: "0.1.0",
      description: `A Bub plugin: ${plugin}`,
      type: "module",
      keywords: ["bub-plugin"],
      files: ["src/", "README.md"],
      bub: { plugins: { [plugin]: "./src/index.ts" }, api: `^${PLUGIN_API_VERSION}` },
      engines: { node: ">=22.19" },
      // node --test with a glob and .ts files needs Node 22.19 or newer: an older one gets one line saying so.
      scripts: { pretest: NODE_CHECK, test: 'node --test "test/**/*.test.ts"', typecheck: "tsc -p tsconfig.json" },
      peerDependencies: { "bub-ts": `^${runtime.version}` },
      devDependencies: { "@types/node": versions.node, "bub-ts": "file:.bub-ts", typescript: versions.typescript },
    }),
    "src/index.ts": `import { definePlugin, defineTool, registerTool, z, type BubFramework } from "bub-ts";

/** A tool: the model calls it as \`${modelTool}\`; you can run it as \`,${tool} name=Ada\`. */
export const greet = defineTool({
  name: "${tool}",
  description: "Greet someone by name",
  parameters: z.object({ name: z.string().min(1).describe("who to greet") }),
  run: ({ name }) => \`Hello, \${name}!\`,
});

export default (framework: BubFramework) => {
  registerTool(framework, greet);
  return definePlugin({
    name: "${plugin}",
    // A hook: one more line for the system prompt.
    systemPrompt: () => "To greet someone, use the ${modelTool} tool.",
  });
};
`,
    [`test/${plugin}.test.ts`]: `import { test } from "node:test";
import assert from "node:assert/strict";
import { toolsOf } from "bub-ts";
import { createTestBub, scriptedModel } from "bub-ts/testing";
import plugin from "../src/index.ts";

test("registers the greet tool, which greets", async () => {
  const bub = await createTestBub({ plugins: [plugin] });
  const tool = toolsOf(bub).get("${tool}");
  assert.ok(tool, "the tool is registered");
  assert.equal(await tool.run({ name: "Ada" }, {}), "Hello, Ada!");
});

test("adds its line to the system prompt and leaves the turn to the model", async () => {
  const model = scriptedModel(["Hi!"]);
  const bub = await createTestBub({ plugins: [plugin, model] });
  assert.equal(bub.runtime.callSync("systemPrompt", { prompt: "", state: {} }), "To greet someone, use the ${modelTool} tool.");
  const result = await bub.processInbound({ channel: "test", chat_id: "1", content: "hello" });
  assert.equal(result.modelOutput, "Hi!");
});
`,
    "tsconfig.json": json({
      compilerOptions: {
        target: "es2023",
        lib: ["es2024"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        verbatimModuleSyntax: true,
        erasableSyntaxOnly: true,
        types: ["node"],
        skipLibCheck: true,
      },
      include: ["src", "test"],
    }),
    ".gitignore": "node_modules/\n.bub-ts/\n*.tgz\n",
    "README.md": `# ${packageName}

A [Bub](https://www.npmjs.com/package/bub-ts) plugin. It adds the tool \`${tool}\` (the model
sees \`${modelTool}\`) and a line to the system prompt (the \`systemPrompt\` hook).

\`\`\`sh
npm test                        # node --test, on bub-ts/testing
bub trust                       # once: lets bub load this folder's own plugin (package.json "bub")
bub run ",${tool} name=Ada"     # try it here without installing: Hello, Ada!
npm pack                        # ${packageName}-0.1.0.tgz
bub install ./${packageName}-0.1.0.tgz
bub hooks                       # systemPrompt: ${plugin}, builtin
\`\`\`

\`bub-ts\` is a peer dependency: the plugin runs inside the bub that loads it and uses its
\`bub-ts\` and \`zod\` (\`z\` is exported by \`bub-ts\`). \`"api": "^${PLUGIN_API_VERSION}"\` in the \`bub\`
section of package.json is the plugin API range this plugin supports: a bub whose plugin API is
outside it lists the plugin as incompatible and does not load it. While you develop, \`node_modules/bub-ts\`
links to \`.bub-ts\`, a stand-in for the bub that wrote this folder; \`bub plugin new\` made it,
and no registry is needed for the commands above.

To type-check, install the compiler once (this one needs the registry):

\`\`\`sh
npm install && npm run typecheck
\`\`\`

The source is TypeScript and is shipped as it is: Bub loads \`.ts\` plugins without a build
step. See docs/plugins.md in the bub-ts package for hooks, \`next()\` and settings.
`,
    ".bub-ts/package.json": json({
      name: "bub-ts",
      version: runtime.version,
      description: `Stands in for the bub-ts at ${runtime.root}.`,
      private: true,
      type: "module",
      exports: {
        ".": { types: "./index.d.ts", default: "./index.js" },
        "./testing": { types: "./testing.d.ts", default: "./testing.js" },
        "./package.json": "./package.json",
      },
    }),
    ".bub-ts/index.js": `${standIn}export * from ${JSON.stringify(entries.index)};\n`,
    ".bub-ts/testing.js": `${standIn}export * from ${JSON.stringify(entries.testing)};\n`,
    ".bub-ts/index.d.ts": `${standIn}export * from ${JSON.stringify(entries.indexTypes)};\n`,
    ".bub-ts/testing.d.ts": `${standIn}export * from ${JSON.stringify(entries.testingTypes)};\n`,
  };
}

/** Writes the scaffold for `name` into `dir` (which must not exist or be empty); returns the folder. */
export async function writeScaffold(name: string, options: PluginNewOptions = {}, runtime: RuntimePackage = runningPackage()): Promise<string> {
  const { packageName } = scaffoldNames(name);
  const dir = resolve(options.dir ?? packageName);
  const existing = await readdir(dir).catch(() => null);
  if (existing !== null && existing.length > 0) throw new Error(`${dir} already exists and is not empty. Choose another folder with --dir, or remove it.`);
  const files = await scaffoldFiles(name, runtime);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(resolve(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  // What `npm install` would link for "bub-ts": "file:.bub-ts", without asking a registry.
  await mkdir(join(dir, "node_modules"), { recursive: true });
  await symlink(join("..", ".bub-ts"), join(dir, "node_modules", "bub-ts"), "dir");
  return dir;
}

/** Adds `bub plugin new <name>` to the program. */
export function registerPluginCommand(app: Command): void {
  const plugin = app.command("plugin").description("write a new plugin package (bub plugin new <name>)");
  plugin
    .command("new")
    .description("write a plugin package with one tool, one hook, a test and a README")
    .argument("<name>", "the plugin's name, e.g. 'weather' (the package is bub-plugin-<name>)")
    .option("--dir <path>", "the folder to write (default ./bub-plugin-<name>)")
    .addHelpText(
      "after",
      `
Examples:
  $ bub plugin new weather
  $ cd bub-plugin-weather && npm test && npm pack
  $ bub install ./bub-plugin-weather-0.1.0.tgz`,
    )
    .action(async (name: string, options: PluginNewOptions) => {
      const dir = await writeScaffold(name, options);
      const shown = relative(process.cwd(), dir) || ".";
      process.stdout.write(`Wrote ${shown}: src/index.ts (a tool and a hook), test/, README.md\nNext: cd ${shown} && npm test\n`);
    });
}
