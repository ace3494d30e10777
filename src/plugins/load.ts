/**
 * Importing plugin modules: `.ts` files through Node's type stripping (jiti for what Node
 * cannot strip) in any folder, with `import "bub-ts"` inside a plugin resolving to this
 * running copy and `import "zod"` falling back to the host's.
 */
import { dirname, isAbsolute } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire, registerHooks } from "node:module";
import { errorCode } from "../config/thrown.ts";

/** This running copy's library entry, ../index.(ts|js) next to this module (what `import "bub-ts"` in a plugin gets). */
export function selfIndexUrl(): URL {
  return new URL(import.meta.url.endsWith(".ts") ? "../index.ts" : "../index.js", import.meta.url);
}

let aliasInstalled = false;

/** `zod` or a subpath of it: what a plugin may use without installing it. */
const HOST_PACKAGES = /^zod(?:\/|$)/;

/**
 * ES module syntax at the start of a line (`import x from`, `export const`, …) or
 * `import.meta`: a `.ts` file that has it is an ES module, whatever package.json says.
 */
const MODULE_SYNTAX = /^\s*(?:import\s*(?:[\w*{]|["'])|export\s+(?:default|const|let|var|function|class|async|type|interface|enum|\{|\*))|\bimport\.meta\b/m;

/**
 * Installs the module hooks plugins load under (once per process):
 * - `import "bub-ts"` resolves to this running copy, so a plugin loaded from anywhere shares
 *   the host's classes and markers;
 * - `import "zod"` that the plugin's folder cannot resolve gets the host's zod;
 * - a `.ts` file written as an ES module loads as one even under a package.json that says
 *   `"type": "commonjs"` (what `npm init -y` writes), instead of failing with `Cannot use
 *   import statement outside a module`. `.mts` and `.cts` keep their fixed meaning.
 */
function installSelfAlias(): void {
  if (aliasInstalled) return;
  aliasInstalled = true;
  const self = selfIndexUrl().href;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === "bub-ts") return { url: self, shortCircuit: true };
      if (!HOST_PACKAGES.test(specifier)) return nextResolve(specifier, context);
      try {
        return nextResolve(specifier, context);
      } catch (error) {
        if (errorCode(error) !== "ERR_MODULE_NOT_FOUND") throw error;
        return nextResolve(specifier, { ...context, parentURL: import.meta.url });
      }
    },
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      if (loaded.format !== "commonjs-typescript" || !url.endsWith(".ts") || !MODULE_SYNTAX.test(String(loaded.source ?? ""))) return loaded;
      return { ...loaded, format: "module-typescript" };
    },
  });
}

/** The host's zod package folder, for a jiti-loaded plugin that has no zod of its own; null when the plugin has one. */
function hostZodAlias(module: string): Record<string, string> {
  try {
    createRequire(module).resolve("zod");
    return {};
  } catch {
    return { zod: dirname(createRequire(import.meta.url).resolve("zod/package.json")) };
  }
}

const TS_FALLBACK_CODES = new Set(["ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING", "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX", "ERR_UNKNOWN_FILE_EXTENSION", "ERR_INVALID_TYPESCRIPT_SYNTAX"]);

/**
 * Imports a plugin module and returns its default export (or the module itself when it has
 * none). `.ts` files load through Node's type stripping, falling back to jiti for syntax
 * Node cannot strip or files inside node_modules.
 */
export async function importPluginModule(module: string): Promise<unknown> {
  installSelfAlias();
  const url = isAbsolute(module) ? pathToFileURL(module).href : module;
  let namespace: unknown;
  try {
    namespace = await import(url);
  } catch (error) {
    const code = errorCode(error);
    if (!/\.(c|m)?ts$/.test(module) || typeof code !== "string" || !TS_FALLBACK_CODES.has(code)) throw error;
    const { createJiti } = await import("jiti");
    const jiti = createJiti(import.meta.url, { moduleCache: false, alias: { "bub-ts": fileURLToPath(selfIndexUrl()), ...hostZodAlias(module) } });
    namespace = await jiti.import(module);
  }
  if ((typeof namespace === "object" || typeof namespace === "function") && namespace !== null && "default" in namespace && namespace.default !== undefined) return namespace.default;
  return namespace;
}
