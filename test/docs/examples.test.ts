/**
 * Docs that run: every ```ts block of README.md and docs/*.md is written to a temporary
 * folder and type-checked against the package's own types (`bub-ts` and `bub-ts/testing`
 * map to src/), so an example cannot rot. A block whose first line is a comment naming a
 * file (`// my-plugin.ts`) is written under that name, so another block of the same page can
 * import it; the others are `<page>-<n>.ts`. Each page is its own folder. An import from
 * `./src/...` (the pages about internals) is the checkout's src/.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tsBlocks } from "../support/markdown.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The file a block asks to be written as (`// name.ts` or `// name.ts: what it is` on its first line), else null. */
function namedFile(block: string): string | null {
  return /^\/\/ ([\w.-]+\.ts)\b/.exec(block)?.[1] ?? null;
}

async function pages(): Promise<string[]> {
  const docs = (await readdir(join(root, "docs"))).filter((name) => name.endsWith(".md")).sort().map((name) => join(root, "docs", name));
  return [join(root, "README.md"), ...docs];
}

function tsc(project: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(join(root, "node_modules", ".bin", "tsc"), ["-p", project, "--pretty", "false"], { cwd: join(project, ".."), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/**
 * Examples known not to type-check yet, each with the one error it must still show (so the
 * entry goes when the example is fixed) and why.
 */
const KNOWN: Record<string, { error: string; why: string }> = {};

describe("the TypeScript examples in the docs", () => {
  it("type-check against the package's types", async () => {
    const dir = await mkdtemp(join(tmpdir(), "bub-docs-"));
    try {
      await symlink(join(root, "node_modules"), join(dir, "node_modules"), "dir");
      await writeFile(join(dir, "package.json"), JSON.stringify({ name: "bub-docs-examples", private: true, type: "module" }));
      let count = 0;
      for (const page of await pages()) {
        const blocks = tsBlocks(await readFile(page, "utf8"));
        if (blocks.length === 0) continue;
        const folder = join(dir, basename(page, ".md"));
        await mkdir(folder);
        for (const [index, block] of blocks.entries()) {
          // `./src/...` in a page about internals is the checkout's src/.
          const code = block.replaceAll(`from "./src/`, `from "${join(root, "src")}/`);
          await writeFile(join(folder, namedFile(block) ?? `${basename(page, ".md")}-${index + 1}.ts`), code);
          count++;
        }
      }
      assert.ok(count >= 15, `found only ${count} examples`);
      const compilerOptions = {
        target: "es2023",
        lib: ["es2024"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: ["node"],
        paths: { "bub-ts": [join(root, "src", "index.ts")], "bub-ts/testing": [join(root, "src", "testing.ts")] },
      };
      await writeFile(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*/*.ts"] }));
      const { output } = await tsc(join(dir, "tsconfig.json"));
      // Only the examples are judged here (src/ has its own type-check): their paths are relative to the temporary folder.
      const errors = output.split("\n").filter((line) => /^[\w-]+\/[\w.-]+\.ts\(\d+,\d+\): error TS\d+/.test(line));
      const known = (line: string) => Object.entries(KNOWN).some(([file, { error }]) => line.startsWith(`${file}(`) && line.includes(error));
      const problems = errors.filter((line) => !known(line));
      assert.deepEqual(problems, [], `docs examples that do not type-check:\n${problems.join("\n")}`);
      for (const [file, { error, why }] of Object.entries(KNOWN)) {
        assert.ok(errors.some((line) => line.startsWith(`${file}(`) && line.includes(error)), `${file} type-checks now (${why}): take it out of KNOWN`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
