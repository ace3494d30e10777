// Counts the type assertions in src/ by parsing every file, so comments, strings and
// `import * as x` never count. Limits: at most 40 `as` casts (not `as const`), `as never`
// and `as unknown as` only inside the hook runtime's typed-dispatch helper, at most 20
// non-null assertions (`x!`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { parse } from "@babel/parser";

const ROOT = new URL("../../", import.meta.url).pathname;
const DISPATCH_HELPER = { file: "src/kernel/runtime.ts", fn: "dispatch" };

interface Cast {
  file: string;
  line: number;
  kind: "as" | "escape" | "non-null";
  fn: string | undefined;
}

interface AstNode {
  type: string;
  loc?: { start: { line: number } };
  typeAnnotation?: AstNode;
  expression?: AstNode;
  id?: { name?: string } | null;
  key?: { name?: string };
  [key: string]: unknown;
}

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

function functionName(node: AstNode): string | undefined {
  if (node.type === "FunctionDeclaration") return node.id?.name;
  if (node.type === "ClassMethod" || node.type === "ObjectMethod") return node.key?.name;
  return undefined;
}

function collect(file: string, node: AstNode, fn: string | undefined, out: Cast[]): void {
  const line = node.loc?.start.line ?? 0;
  const name = functionName(node) ?? fn;
  if (node.type === "TSAsExpression" || node.type === "TSTypeAssertion") {
    const target = node.typeAnnotation?.type;
    const inner = node.expression;
    const escape =
      target === "TSNeverKeyword" ||
      (inner?.type === "TSAsExpression" && inner.typeAnnotation?.type === "TSUnknownKeyword");
    const isConst =
      target === "TSTypeReference" &&
      (node.typeAnnotation as { typeName?: { name?: string } }).typeName?.name === "const";
    if (!isConst) out.push({ file, line, kind: escape ? "escape" : "as", fn: name });
  } else if (node.type === "TSNonNullExpression") {
    out.push({ file, line, kind: "non-null", fn: name });
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "loc" || key === "leadingComments" || key === "trailingComments") continue;
    const children = Array.isArray(value) ? value : [value];
    for (const child of children) {
      if (child && typeof child === "object" && typeof (child as AstNode).type === "string") {
        collect(file, child as AstNode, name, out);
      }
    }
  }
}

async function casts(): Promise<Cast[]> {
  const out: Cast[] = [];
  for await (const path of sourceFiles(join(ROOT, "src"))) {
    const ast = parse(await readFile(path, "utf8"), {
      sourceType: "module",
      plugins: ["typescript"],
    });
    collect(relative(ROOT, path), ast.program as unknown as AstNode, undefined, out);
  }
  return out;
}

const list = (items: Cast[]) => items.map((c) => `${c.file}:${c.line}`).join("\n");

test("src/ keeps at most 40 `as` casts, not counting `as const`", async () => {
  const all = (await casts()).filter((c) => c.kind !== "non-null");
  assert.ok(all.length <= 40, `${all.length} casts:\n${list(all)}`);
});

test("`as never` and `as unknown as` appear only in the hook runtime's dispatch helper", async () => {
  const escapes = (await casts()).filter((c) => c.kind === "escape");
  const outside = escapes.filter(
    (c) => c.file !== DISPATCH_HELPER.file || c.fn !== DISPATCH_HELPER.fn,
  );
  assert.deepEqual(list(outside), "");
});

test("src/ keeps at most 20 non-null assertions", async () => {
  const bangs = (await casts()).filter((c) => c.kind === "non-null");
  assert.ok(bangs.length <= 20, `${bangs.length} non-null assertions:\n${list(bangs)}`);
});
