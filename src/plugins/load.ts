/**
 * Importing plugin modules: `.ts` files through Node's type stripping (jiti for what Node
 * cannot strip), with `import "bub-ts"` inside a plugin resolving to this running copy.
 */
import { isAbsolute } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { registerHooks } from "node:module";

/** This running copy's library entry, ../index.(ts|js) next to this module (what `import "bub-ts"` in a plugin gets). */
export function selfIndexUrl(): URL {
  return new URL(import.meta.url.endsWith(".ts") ? "../index.ts" : "../index.js", import.meta.url);
}

let aliasInstalled = false;

/**
 * Makes `import "bub-ts"` inside plugins resolve to this running copy, so a plugin loaded
 * from anywhere shares the host's classes and markers.
 */
function installSelfAlias(): void {
  if (aliasInstalled) return;
  aliasInstalled = true;
  const self = selfIndexUrl().href;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === "bub-ts") return { url: self, shortCircuit: true };
      return nextResolve(specifier, context);
    },
  });
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
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (!/\.(c|m)?ts$/.test(module) || !TS_FALLBACK_CODES.has(code)) throw error;
    const { createJiti } = await import("jiti");
    const jiti = createJiti(import.meta.url, { moduleCache: false, alias: { "bub-ts": fileURLToPath(selfIndexUrl()) } });
    namespace = (await jiti.import(module)) as Record<string, unknown>;
  }
  return namespace.default !== undefined ? namespace.default : namespace;
}
