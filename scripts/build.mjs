// Builds dist/ without ever leaving it half there: tsc compiles into a fresh folder beside it,
// the `bub` binary is made executable there, then each file is moved into dist/ with one
// rename (atomic on one file system) and files the new build no longer has are removed. A
// `bub` started from dist/ during a rebuild (npx bub, npm link) finds every file it needs.
//
//   node scripts/build.mjs [out]     default out: dist
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, rmdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = resolve(root, process.argv[2] ?? "dist");
mkdirSync(dirname(out), { recursive: true });
const fresh = mkdtempSync(join(dirname(out), ".build-"));

/** Every file below `dir`, as paths relative to it. */
function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

try {
  const result = spawnSync(join(root, "node_modules", ".bin", "tsc"), ["-p", join(root, "tsconfig.build.json"), "--outDir", fresh], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
  chmodSync(join(fresh, "bin", "bub.js"), 0o755);
  const built = files(fresh);
  for (const file of built) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    renameSync(join(fresh, file), join(out, file));
  }
  const keep = new Set(built);
  for (const file of files(out)) if (!keep.has(file)) rmSync(join(out, file));
  // Folders the new build left empty go too, deepest first.
  const folders = readdirSync(out, { recursive: true, withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(entry.parentPath, entry.name));
  for (const folder of folders.sort((a, b) => b.length - a.length)) {
    if (readdirSync(folder).length === 0) rmdirSync(folder);
  }
} finally {
  rmSync(fresh, { recursive: true, force: true });
}
