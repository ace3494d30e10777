#!/usr/bin/env node
// The `bub` binary. It checks the Node.js version before loading anything that needs a
// newer one, turns on Node's on-disk compile cache, then hands over to the CLI.
import module from "node:module";
import { unsupportedNode } from "../cli/node-version.ts";

const problem = unsupportedNode(process.versions.node);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
module.enableCompileCache?.();
const { main } = await import("../cli/program.ts");
process.exitCode = await main(process.argv.slice(2));
