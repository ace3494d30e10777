// After tsc: marks tsc's dist/cli/main.js executable (tsc keeps the shebang, not the mode)
// and bundles the `bub` binary into dist/bin/ (see bundle-cli.mjs).
import { chmodSync } from "node:fs";
import { bundleCli } from "./bundle-cli.mjs";

chmodSync(new URL("../dist/cli/main.js", import.meta.url), 0o755);
await bundleCli();
