#!/usr/bin/env node
// The `bub` binary. Kept tiny: enable the compile cache before anything else is loaded.
import module from "node:module";

module.enableCompileCache?.();
const { main } = await import("./program.ts");
process.exitCode = await main(process.argv.slice(2));
