// Bundles the `bub` binary with esbuild so `bub --help` loads a handful of files instead of
// ~50 modules. Run by finish-build.mjs after tsc; tests call bundleCli() into a temp dir.
//
// Layout: <outdir>/bub.js (the bin), <outdir>/index.js (the library API, what a plugin's
// `import "bub-ts"` resolves to, so plugins share the CLI's classes) and shared chunks, all in
// one flat folder two levels below the package root, like tsc's dist/<dir>/<file>.js, so
// paths computed from import.meta.url ("../../package.json", "../../skills") still hold.
// Every dynamic import() stays a lazily loaded chunk; npm packages stay external except
// commander, which every run needs.
import { readFile, writeFile, chmod, rm } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const INLINED = new Set(["commander"]);
const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
// Builtins whose default/namespace import becomes a lazy proxy, loaded on first property
// read: commander imports child_process (~6 ms with net and streams) only to run external
// subcommands. Only for modules whose functions do not use `this`.
const LAZY_NAMESPACES = new Set(["node:child_process"]);

/**
 * `import { x } from "node:fs"` makes Node build an ESM facade of the whole module, which
 * reads every export, lazy getters included (fs.ReadStream loads the streams, http's fetch
 * globals load undici): ~10–40 ms at startup. `process.getBuiltinModule()` returns the CommonJS
 * exports object without touching them. This rewrites the builtin imports of one esbuild
 * output file into consts at its top (builtins depend on nothing, so hoisting them is safe).
 */
export function rewriteBuiltinImports(code) {
  const consts = [];
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
    for (const name of [defaultName, namespaceName]) {
      if (name) consts.push(LAZY_NAMESPACES.has(id) ? `const ${name} = new Proxy({}, { get: (_, key) => ${load}[key], has: (_, key) => key in ${load} });` : `const ${name} = ${load};`);
    }
    const bindings = (named ?? "")
      .split(",")
      .map((binding) => binding.trim())
      .filter(Boolean)
      .map((binding) => {
        const alias = /^([\w$]+)\s+as\s+([\w$]+)$/.exec(binding);
        if (alias) return alias[1] === "default" ? null : `${alias[1]}: ${alias[2]}`;
        if (!/^[\w$]+$/.test(binding)) throw new Error(`bundle-cli: cannot rewrite builtin import: ${statement.trim()}`);
        return binding;
      });
    const defaultAlias = (named ?? "").match(/\bdefault\s+as\s+([\w$]+)/);
    if (defaultAlias) consts.push(`const ${defaultAlias[1]} = ${load};`);
    const destructured = bindings.filter(Boolean);
    if (destructured.length) consts.push(`const { ${destructured.join(", ")} } = ${load};`);
    return "";
  });
  if (consts.length === 0) return code;
  const shebangEnd = rewritten.startsWith("#!") ? rewritten.indexOf("\n") + 1 : 0;
  return rewritten.slice(0, shebangEnd) + consts.join("\n") + "\n" + rewritten.slice(shebangEnd);
}

/**
 * Builds the CLI bundle into `outdir` (default dist/bin) and returns the bin's path.
 * `outdir` must sit two levels below a folder holding package.json, skills/ and
 * node_modules (the package root, or a copy/symlink of them in tests).
 */
export async function bundleCli({ outdir = join(root, "dist", "bin") } = {}) {
  const { build } = await import("esbuild");
  await rm(outdir, { recursive: true, force: true }); // no stale chunks from an earlier build
  const result = await build({
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
    legalComments: "none",
    logLevel: "warning",
    write: true,
    metafile: true,
    plugins: [
      {
        name: "inline-startup-packages",
        setup(build) {
          // Bare specifiers: builtins and npm packages stay imports, except INLINED ones.
          build.onResolve({ filter: /^[^./]/ }, (args) => (INLINED.has(args.path) ? undefined : { path: args.path, external: true }));
        },
      },
    ],
  });
  for (const file of Object.keys(result.metafile.outputs)) {
    if (!file.endsWith(".js")) continue;
    const path = join(root, file);
    const code = await readFile(path, "utf8");
    const rewritten = rewriteBuiltinImports(code);
    if (rewritten !== code) await writeFile(path, rewritten);
  }
  const bin = join(outdir, "bub.js");
  await chmod(bin, 0o755);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  console.log(await bundleCli(outdir ? { outdir } : {}));
}
