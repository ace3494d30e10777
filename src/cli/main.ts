#!/usr/bin/env node
// The `bub` binary. Kept tiny: enable the compile cache before anything else is loaded, and
// answer a bare `bub --version` without loading commander or any plugin.
// Built twice: by tsc (dist/cli/main.js) and by scripts/bundle-cli.mjs (dist/bin/bub.js, the
// package's bin); both sit two folders below the package root.
import module from "node:module";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  const fs = process.getBuiltinModule("node:fs");
  const { version } = JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  // Straight to fd 1: creating process.stdout costs ~5 ms; Node's stream falls back on error.
  const text = Buffer.from(`${version}\n`);
  let written = 0;
  try {
    while (written < text.length) written += fs.writeSync(1, text, written);
  } catch {
    process.stdout.write(text.subarray(written));
  }
} else {
  module.enableCompileCache?.();
  const { main } = await import("./program.ts");
  process.exitCode = await main(argv);
}
