// Counts the AsyncLocalStorages made in src/ by parsing every file (issue 33): at most two,
// the kernel's async scope (log route, running() scope, correlation ids) and the tracing
// context. What a hook argument already carries (the turn's message, signal, tool reporter)
// travels in arguments. An import renamed (`AsyncLocalStorage as Store`) or a namespace
// import (`hooks.AsyncLocalStorage`) counts too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { parse } from "@babel/parser";

const ROOT = new URL("../../", import.meta.url).pathname;
const LIMIT = 2;
const MODULES = new Set(["node:async_hooks", "async_hooks"]);

interface AstNode {
  type: string;
  loc?: { start: { line: number } };
  [key: string]: unknown;
}

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

function isNode(value: unknown): value is AstNode {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

function* walk(node: AstNode): Generator<AstNode> {
  yield node;
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const item of value) if (isNode(item)) yield* walk(item);
    if (isNode(value)) yield* walk(value);
  }
}

function nameOf(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  if (node.type === "Identifier") return String(node.name);
  if (node.type === "StringLiteral") return String(node.value);
  return undefined;
}

/** The lines of `file` that make an AsyncLocalStorage. */
function storagesIn(source: string): number[] {
  const program = parse(source, { sourceType: "module", plugins: ["typescript"] }).program as unknown as AstNode;
  const names = new Set<string>();
  const namespaces = new Set<string>();
  for (const node of walk(program)) {
    if (node.type !== "ImportDeclaration" || !MODULES.has(String((node.source as AstNode).value))) continue;
    for (const specifier of node.specifiers as AstNode[]) {
      const local = nameOf(specifier.local);
      if (!local) continue;
      if (specifier.type === "ImportSpecifier" && nameOf(specifier.imported) === "AsyncLocalStorage") names.add(local);
      else if (specifier.type === "ImportNamespaceSpecifier" || specifier.type === "ImportDefaultSpecifier") namespaces.add(local);
    }
  }
  const lines: number[] = [];
  for (const node of walk(program)) {
    if (node.type !== "NewExpression" || !isNode(node.callee)) continue;
    const callee = node.callee;
    const direct = callee.type === "Identifier" && names.has(String(callee.name));
    const viaNamespace = callee.type === "MemberExpression" && namespaces.has(nameOf(callee.object) ?? "") && nameOf(callee.property) === "AsyncLocalStorage";
    if (direct || viaNamespace) lines.push(node.loc?.start.line ?? 0);
  }
  return lines;
}

test(`src/ makes at most ${LIMIT} AsyncLocalStorages`, async () => {
  const found: string[] = [];
  for await (const path of sourceFiles(join(ROOT, "src"))) {
    for (const line of storagesIn(await readFile(path, "utf8"))) found.push(`${relative(ROOT, path)}:${line}`);
  }
  assert.ok(found.length >= 1, "the kernel's async scope is found (the scan works)");
  assert.ok(found.length <= LIMIT, `${found.length} AsyncLocalStorages in src/ (at most ${LIMIT}); carry the value in a hook argument instead:\n  ${found.join("\n  ")}`);
});

test("the scan finds renamed and namespace imports, and nothing in comments or strings", () => {
  const source = [
    'import { AsyncLocalStorage as Store } from "node:async_hooks";',
    'import * as hooks from "async_hooks";',
    "const a = new Store();",
    "const b = new hooks.AsyncLocalStorage();",
    "// new AsyncLocalStorage()",
    'const c = "new AsyncLocalStorage()";',
  ].join("\n");
  assert.deepEqual(storagesIn(source), [3, 4]);
});
