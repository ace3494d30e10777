#!/usr/bin/env node
// The `bub` binary. It checks the Node.js version before loading anything that needs a
// newer one, answers a bare `bub --version` from package.json, moves the secrets out of
// its environment block (re-executing itself when there are any), turns on Node's on-disk
// compile cache, then hands over to the CLI.
import module from "node:module";
import { unsupportedNode } from "../cli/node-version.ts";
import { packageVersion } from "../cli/version.ts";

const problem = unsupportedNode(process.versions.node);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`${packageVersion()}\n`);
} else {
  // Before anything else: the secrets leave the environment block (src/cli/secret-env.ts).
  // Help runs no tool, so it starts no second image.
  const help = argv.length === 0 || argv[0] === "help" || argv.includes("--help") || argv.includes("-h");
  const { keepSecretsOffEnvironment } = help ? { keepSecretsOffEnvironment: () => null } : await import("../cli/secret-env.ts");
  const handoffProblem = keepSecretsOffEnvironment({
    env: process.env,
    execPath: process.execPath,
    execArgv: process.execArgv,
    script: process.argv[1] ?? "",
    args: argv,
    execve: process.platform === "win32" ? undefined : process.execve?.bind(process),
    warn: (line) => process.stderr.write(`${line}\n`),
  });
  if (handoffProblem) {
    process.stderr.write(`${handoffProblem}\n`);
    process.exit(1);
  }
  module.enableCompileCache?.();
  const [{ main }, { endQuietlyOnClosedStdout }] = await Promise.all([import("../cli/program.ts"), import("../cli/stdout.ts")]);
  endQuietlyOnClosedStdout();
  process.exitCode = await main(argv);
}
