// Bundles the `bub` binary with esbuild so `bub --help` loads a handful of files instead of
// ~50 modules. Run by finish-build.mjs after tsc; tests call bundleCli() into a temp dir.
//
// Layout: <outdir>/bub.js (the bin), <outdir>/index.js (the library API, what a plugin's
// `import "bub-ts"` resolves to, so plugins share the CLI's classes) and shared chunks, all in
// one flat folder two levels below the package root, like tsc's dist/<dir>/<file>.js, so
// paths computed from import.meta.url ("../../package.json", "../../skills") still hold.
// Every dynamic import() stays a lazily loaded chunk; npm packages stay external except
// the INLINED_PACKAGES below.
import { readFile, writeFile, chmod, rm } from "node:fs/promises";
import { builtinModules } from "node:module";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
// Pure-ESM packages on the paths `bub` runs often (startup; a turn: settings schemas, skills
// frontmatter, the model providers). Bundled, tree-shaken and in a few chunks they load
// several times faster than as hundreds of separate modules (zod: ~87 ms → ~23 ms).
// CommonJS or rarely used packages (grammY, markdown rendering, jiti) stay external.
const INLINED_PACKAGES = new Set([
  "commander",
  "zod",
  "yaml",
  "@ai-sdk/openai-compatible",
  "@ai-sdk/openai",
  "@ai-sdk/anthropic",
  "@ai-sdk/provider",
  "@ai-sdk/provider-utils",
  "@openrouter/ai-sdk-provider",
  "eventsource-parser",
  "@workflow/serde",
  "@standard-schema/spec",
]);
const packageOf = (specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
const INLINED = { has: (specifier) => INLINED_PACKAGES.has(packageOf(specifier)) };
const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
// Builtins loaded on first use instead of when the chunk that imports them loads: every
// import of them (default, namespace or named) becomes a proxy that loads the module on its
// first property read, call or `new`. commander imports child_process (~6 ms with net and
// streams) only to run external subcommands; the shell tools only when a command runs;
// crypto (~5 ms) is needed for random ids of spills and shells; readline only by the chat
// REPL and fs.read; sqlite only by the tape stores; fs/promises (~1.7 ms: its FileHandle,
// watcher and readline modules) only by rarely used paths, a turn uses src/kernel/fs-async.ts.
const LAZY_BUILTINS = new Set(["node:child_process", "node:crypto", "node:fs/promises", "node:readline", "node:sqlite"]);
const LAZY_HELPER = `const __bubLazy = (id, key) => { const get = () => (key === null ? globalThis.process.getBuiltinModule(id) : globalThis.process.getBuiltinModule(id)[key]); return new Proxy(function () {}, { apply: (_, self, args) => Reflect.apply(get(), self, args), construct: (_, args) => Reflect.construct(get(), args), get: (_, prop) => get()[prop], has: (_, prop) => prop in get() }); };`;

/**
 * `import { x } from "node:fs"` makes Node build an ESM facade of the whole module, which
 * reads every export, lazy getters included (fs.ReadStream loads the streams, http's fetch
 * globals load undici): ~10–40 ms at startup. `process.getBuiltinModule()` returns the CommonJS
 * exports object without touching them. This rewrites the builtin imports of one esbuild
 * output file into consts at its top (builtins depend on nothing, so hoisting them is safe).
 */
export function rewriteBuiltinImports(code) {
  const consts = [];
  let usesLazy = false;
  const rewritten = code.replace(/^import\s+([^;"']*?)\s*(?:from\s*)?"([^"]+)";[ \t]*\n/gm, (statement, clause, specifier) => {
    if (!BUILTINS.has(specifier)) return statement;
    const id = specifier.startsWith("node:") ? specifier : `node:${specifier}`;
    const load = `globalThis.process.getBuiltinModule(${JSON.stringify(id)})`;
    if (clause === "") {
      consts.push(`${load};`);
      return "";
    }
    const parts = /^(?:([\w$]+)\s*(?:,\s*)?)?(?:\*\s*as\s+([\w$]+)|\{([^}]*)\})?$/.exec(clause.trim());
    if (!parts) throw new Error(`bundle-cli: cannot rewrite builtin import: ${statement.trim()}`);
    const [, defaultName, namespaceName, named] = parts;
    const lazy = LAZY_BUILTINS.has(id);
    if (lazy) usesLazy = true;
    for (const name of [defaultName, namespaceName]) {
      if (name) consts.push(lazy ? `const ${name} = __bubLazy(${JSON.stringify(id)}, null);` : `const ${name} = ${load};`);
    }
    const bindings = (named ?? "")
      .split(",")
      .map((binding) => binding.trim())
      .filter(Boolean)
      .map((binding) => {
        const alias = /^([\w$]+)\s+as\s+([\w$]+)$/.exec(binding);
        if (alias) return alias[1] === "default" ? null : [alias[1], alias[2]];
        if (!/^[\w$]+$/.test(binding)) throw new Error(`bundle-cli: cannot rewrite builtin import: ${statement.trim()}`);
        return [binding, binding];
      })
      .filter(Boolean);
    const defaultAlias = (named ?? "").match(/\bdefault\s+as\s+([\w$]+)/);
    if (defaultAlias) consts.push(lazy ? `const ${defaultAlias[1]} = __bubLazy(${JSON.stringify(id)}, null);` : `const ${defaultAlias[1]} = ${load};`);
    if (lazy) {
      for (const [imported, local] of bindings) consts.push(`const ${local} = __bubLazy(${JSON.stringify(id)}, ${JSON.stringify(imported)});`);
    } else if (bindings.length) {
      consts.push(`const { ${bindings.map(([imported, local]) => (imported === local ? local : `${imported}: ${local}`)).join(", ")} } = ${load};`);
    }
    return "";
  });
  if (consts.length === 0) return code;
  if (usesLazy) consts.unshift(LAZY_HELPER);
  const shebangEnd = rewritten.startsWith("#!") ? rewritten.indexOf("\n") + 1 : 0;
  return rewritten.slice(0, shebangEnd) + consts.join("\n") + "\n" + rewritten.slice(shebangEnd);
}

const STARTUP = "bub:startup";
const TURN = "bub:turn";
/**
 * The lazily imported modules every model turn loads (`bub run`, each chat or gateway
 * message): the agent, its settings schemas, tools, skills prompt, tape store and the channel
 * manager. Grouped into one virtual module like startup below, so a turn loads a few chunks
 * instead of ~20 small ones (each file costs ~0.35 ms to resolve, read and link).
 */
const TURN_MODULES = [
  "src/builtin/agent-plugin.ts",
  "src/builtin/schemas.ts",
  "src/channels/manager.ts",
  "src/skills/prompt.ts",
  "src/tape/store-from-settings.ts",
  "src/tools/commands.ts",
  "src/tools/global.ts",
];

/**
 * esbuild puts a module in a chunk by the set of entry points, dynamic import() targets
 * included, that reach it. The modules `bub` needs at startup are also imported by lazy
 * parts (the agent, tools, channels), so each lazy part's different reach splits them into
 * ~10 small chunks, and each file costs ~0.35 ms to load. Lazy parts only ever load after
 * startup, so nothing is lost by letting each of them reach all of startup: this plugin
 * makes every lazy import() target re-export a virtual module `bub:startup` that re-exports
 * every startup module, and turns an import() of a startup module into an import() of
 * `bub:startup` (the same namespace object). The startup modules then share one chunk.
 * The {@link TURN_MODULES} get the same treatment as `bub:turn`: an import() of any of them
 * loads them all.
 */
function groupChunksPlugin({ startup, lazy }) {
  const groups = [
    { id: STARTUP, modules: startup, reexportsStartup: false },
    { id: TURN, modules: TURN_MODULES, reexportsStartup: true },
  ];
  const overlap = TURN_MODULES.filter((path) => startup.includes(path));
  if (overlap.length) throw new Error(`bundle-cli: ${overlap.join(", ")} load at startup now; remove them from TURN_MODULES`);
  const memberOf = new Map();
  for (const group of groups) group.modules.forEach((path, position) => memberOf.set(path, { group, position }));
  const plugin = {
    name: "group-chunks",
    setup(build) {
      build.onResolve({ filter: /^bub:(startup|turn)$/ }, (args) => ({ path: args.path, namespace: "bub-group" }));
      build.onLoad({ filter: /.*/, namespace: "bub-group" }, (args) => {
        const group = groups.find((candidate) => candidate.id === args.path);
        const lines = group.modules.map((path, position) => `export * as m${position} from ${JSON.stringify(join(root, path))};`);
        if (group.reexportsStartup) lines.push(`export * as __bubStartup from ${JSON.stringify(STARTUP)};`);
        return { contents: lines.join("\n"), loader: "js", resolveDir: root };
      });
    },
  };
  return {
    plugin,
    /** Points src/ imports of group members at the group, and makes lazy modules reach startup. */
    rewrite(file, code) {
      const path = relative(root, file).split(sep).join("/");
      if (!path.startsWith("src/") || !path.endsWith(".ts")) return undefined;
      code = code.replace(/\bimport\(\s*(["'])(\.{1,2}\/[^"'\n]+)\1\s*\)/g, (call, _quote, specifier) => {
        const target = relative(root, resolve(dirname(file), specifier)).split(sep).join("/");
        const member = memberOf.get(target);
        return member ? `import(${JSON.stringify(member.group.id)}).then((group) => group.m${member.position})` : call;
      });
      if (lazy.has(path) && !memberOf.has(path)) code += `\nexport * as __bubStartup from ${JSON.stringify(STARTUP)};\n`;
      return code;
    },
  };
}

/** The startup modules (static imports from program.ts, outside src/cli/) and the lazily imported ones. */
function splitGraph(metafile) {
  const inputs = metafile.inputs;
  const reached = new Set();
  const visit = (path) => {
    if (reached.has(path) || !inputs[path]) return;
    reached.add(path);
    for (const edge of inputs[path].imports) if (edge.kind === "import-statement" && !edge.external) visit(edge.path);
  };
  visit("src/cli/program.ts");
  const startup = [...reached].filter((path) => path.startsWith("src/") && !path.startsWith("src/cli/")).sort();
  const lazy = new Set();
  for (const input of Object.values(inputs)) {
    for (const edge of input.imports) {
      if (edge.kind === "dynamic-import" && !edge.external && edge.path.startsWith("src/") && !reached.has(edge.path)) lazy.add(edge.path);
    }
  }
  return { startup, lazy };
}

/**
 * The AI SDK packages build a `Headers` for every request (and test `instanceof Headers`);
 * Node's global one loads all of undici, ~45 ms of a cold `bub run`. In the bundled copies of
 * those packages the name is bound to the small class of src/llm/http-fetch.ts instead, the
 * module whose `fetch` the providers are given anyway. Nothing outside them is touched.
 */
const HEADERS_USERS = /node_modules[\\/](@ai-sdk[\\/]provider-utils|@ai-sdk[\\/]openai-compatible|@ai-sdk[\\/]openai|@ai-sdk[\\/]anthropic|@openrouter[\\/]ai-sdk-provider)[\\/].*\.m?js$/;
const LITE_MODULE = join(root, "src", "llm", "http-fetch.ts");
function liteHeaders(file, code) {
  if (!HEADERS_USERS.test(file) || !/\bHeaders\b/.test(code)) return undefined;
  return `import { LiteHeaders as Headers } from ${JSON.stringify(LITE_MODULE)};\n${code}`;
}

/**
 * zod's namespace re-exports all of its 60 error-message locales (~340 KB, ~2.5 ms of every
 * start that loads zod); bub only ever uses English, the default. Inside the bundle the
 * locales index holds `en` alone. Plugins importing their own `zod` are not affected.
 */
const englishOnlyZod = {
  name: "english-only-zod",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), "..", "locales", "en.js"), namespace: "zod-locales" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, loader: "js", resolveDir: dirname(args.path) }));
  },
};

/**
 * Node's compile cache keeps only the code V8 compiled while loading a file; every function
 * that runs later is compiled again on every start. V8's explicit compile hint (the magic
 * comment `//# allFunctionsCalledOnLoad` on a file's first line) compiles all of a file's
 * functions up front, so they land in the cache too. That pays off for the chunks whose
 * code mostly runs on every turn — the turn group, zod, the AI SDK's provider utilities
 * (~10 ms of `bub run`) — and not for big chunks used a little. Not for startup and
 * commander either: `bub --help` runs little of them and would pay ~10 ms to load the rest.
 */
const EAGER_PACKAGES = /^node_modules\/zod\/|^node_modules\/@ai-sdk\/provider-utils\/dist\/index\.js$/;

/**
 * `import { z } from "zod"` (our sources, the AI SDK providers) is zod's whole namespace, and
 * esbuild materializes a namespace shared across chunks with every export in it: ~300 KB of
 * zod, ~14 ms to load in every turn. Here each such import reads a virtual module `bub:zod`
 * instead, which re-exports only the members the bundle's code uses as values (collected
 * while rewriting), so esbuild drops the rest (~half, ~9 ms). A file that uses `z` other
 * than as `z.member` fails the build, since it could reach a dropped member.
 */
const ZOD_NAMESPACE = join(root, "node_modules", "zod", "v4", "classic", "external.js");
const ZOD_IMPORT = /^import\s*\{\s*z(?:\s+as\s+([\w$]+))?\s*\}\s*from\s*["']zod(?:\/v4)?["'];?[ \t]*$/gm;

function zodMembers() {
  const members = new Set();
  return {
    /** Serves `bub:zod`: the whole namespace while collecting (the probe build), then the members used. */
    plugin(collecting) {
      return {
        name: "zod-members",
        setup(build) {
          build.onResolve({ filter: /^bub:zod$/ }, () => ({ path: "bub:zod", namespace: "bub-zod" }));
          build.onLoad({ filter: /.*/, namespace: "bub-zod" }, async () => {
            if (collecting) return { contents: `export * from ${JSON.stringify(ZOD_NAMESPACE)};`, loader: "js", resolveDir: root };
            const exported = new Set(Object.keys(await import(pathToFileURL(ZOD_NAMESPACE).href)));
            const names = [...members].filter((name) => exported.has(name)).sort();
            return { contents: `export { ${names.join(", ")} } from ${JSON.stringify(ZOD_NAMESPACE)};`, loader: "js", resolveDir: root };
          });
        },
      };
    },
    async rewrite(file, code, transform) {
      const imports = [...code.matchAll(ZOD_IMPORT)];
      if (imports.length === 0 || /[\\/]node_modules[\\/]zod[\\/]/.test(file)) return undefined;
      // Type positions (`z.infer<…>`) are not values: read the members from the code without types.
      const values = file.endsWith(".ts") ? (await transform(code, { loader: "ts", format: "esm" })).code : code;
      for (const [statement, alias] of imports) {
        const name = alias ?? "z";
        const body = values.replace(statement, "");
        for (const [, member] of body.matchAll(new RegExp(`(?<![\\w$.])${escapeRegExp(name)}\\s*\\.\\s*([A-Za-z_$][\\w$]*)`, "g"))) members.add(member);
        const other = new RegExp(`(?<![\\w$.\\-\\[])${escapeRegExp(name)}(?![\\w$]|\\s*\\.)`).exec(body.replace(/^import\s[^;]*;/gm, ""));
        if (other) throw new Error(`bundle-cli: ${relative(root, file)} uses zod's '${name}' other than as ${name}.member (near "${body.slice(Math.max(0, other.index - 30), other.index + 30)}"): import the names it needs`);
      }
      return code.replace(ZOD_IMPORT, (_statement, alias) => `import * as ${alias ?? "z"} from "bub:zod";`);
    },
  };
}

const escapeRegExp = (name) => name.replace(/\$/g, "\\$");

/**
 * Runs the source rewrites (`(file, code, transform) => code | undefined`) on every file
 * esbuild loads, in order, from one callback: esbuild uses the first onLoad answer only.
 */
function sourceRewrites(rewrites, transform) {
  return {
    name: "source-rewrites",
    setup(build) {
      build.onLoad({ filter: /\.(ts|m?js)$/ }, async (args) => {
        const original = await readFile(args.path, "utf8");
        let code = original;
        for (const rewrite of rewrites) code = (await rewrite(args.path, code, transform)) ?? code;
        if (code === original) return undefined;
        return { contents: code, loader: args.path.endsWith(".ts") ? "ts" : "js", resolveDir: dirname(args.path) };
      });
    },
  };
}

const REQUIRE_BANNER = 'import { createRequire as __bubCreateRequire } from "node:module"; const require = __bubCreateRequire(import.meta.url);';

/** Removes the `require` banner from a file that never uses `require` (all but esbuild's shim). */
function withoutUnusedBanner(code) {
  const at = code.indexOf(REQUIRE_BANNER);
  if (at === -1) return code;
  const rest = code.slice(0, at) + code.slice(at + REQUIRE_BANNER.length);
  return /\brequire\b/.test(rest) ? code : rest;
}

function withCompileHint(code) {
  const shebangEnd = code.startsWith("#!") ? code.indexOf("\n") + 1 : 0;
  return `${code.slice(0, shebangEnd)}//# allFunctionsCalledOnLoad\n${code.slice(shebangEnd)}`;
}

/**
 * Builds the CLI bundle into `outdir` (default dist/bin) and returns the bin's path.
 * `outdir` must sit two levels below a folder holding package.json, skills/ and
 * node_modules (the package root, or a copy/symlink of them in tests).
 */
export async function bundleCli({ outdir = join(root, "dist", "bin") } = {}) {
  const { build, transform } = await import("esbuild");
  await rm(outdir, { recursive: true, force: true }); // no stale chunks from an earlier build
  const externals = {
    name: "externals",
    setup(build) {
      // Bare specifiers: builtins and npm packages stay imports, except INLINED ones.
      build.onResolve({ filter: /^[^./]/ }, (args) => (INLINED.has(args.path) || args.path === STARTUP || args.path === TURN || args.path === "bub:zod" ? undefined : { path: args.path, external: true }));
    },
  };
  const options = {
    absWorkingDir: root,
    entryPoints: { bub: "src/cli/main.ts", index: "src/index.ts" },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    // plugins.ts points a plugin's `import "bub-ts"` at this bundle's own index.js.
    define: { __BUB_BUNDLE_INDEX__: JSON.stringify("./index.js") },
    chunkNames: "[name]-[hash]",
    // Inlined CommonJS code (yaml's node build) requires builtins: esbuild's `__require` shim
    // needs a real `require`. Kept only in the files that use it (see bundleCli).
    banner: { js: REQUIRE_BANNER },
    legalComments: "none",
    logLevel: "warning",
    // A zod member missing from `bub:zod` (see zodMembers) must fail the build, not run as undefined.
    logOverride: { "import-is-undefined": "error" },
    metafile: true,
  };
  const zod = zodMembers(); // the probe build collects the members, the real one uses them
  const probe = await build({ ...options, write: false, plugins: [zod.plugin(true), sourceRewrites([liteHeaders, zod.rewrite], transform), englishOnlyZod, externals] });
  const groups = groupChunksPlugin(splitGraph(probe.metafile));
  const result = await build({ ...options, write: true, plugins: [groups.plugin, zod.plugin(false), sourceRewrites([groups.rewrite, liteHeaders, zod.rewrite], transform), englishOnlyZod, externals] });
  const runsOnEveryTurn = (input) => TURN_MODULES.includes(input) || EAGER_PACKAGES.test(input);
  const outputs = [];
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (!file.endsWith(".js")) continue;
    const path = join(root, file);
    outputs.push({ path, output, code: withoutUnusedBanner(await readFile(path, "utf8")) });
  }
  // Chunks left with no code (modules holding only types, shared by several entries) are
  // dropped with the imports of them: each file costs a resolve, read and link per start.
  const empty = outputs.filter(({ code }) => !/\S/.test(code.replace(/^#!.*\n/, "").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "")));
  for (const { path } of empty) await rm(path);
  for (const { path, output, code } of outputs) {
    if (empty.some((chunk) => chunk.path === path)) continue;
    const kept = empty.reduce((text, chunk) => text.replaceAll(`import ${JSON.stringify(`./${basename(chunk.path)}`)};\n`, ""), code);
    // Then without comments and indentation: a third less source for Node to read and hash
    // at startup (~3 ms). Names are kept, so stack traces stay readable; for line numbers,
    // run tsc's build instead (node dist/cli/main.js).
    const { code: minified } = await transform(rewriteBuiltinImports(kept), { minifyWhitespace: true, format: "esm", target: "node22", legalComments: "none" });
    await writeFile(path, Object.keys(output.inputs).some(runsOnEveryTurn) ? withCompileHint(minified) : minified);
  }
  const bin = join(outdir, "bub.js");
  await chmod(bin, 0o755);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  console.log(await bundleCli(outdir ? { outdir } : {}));
}
