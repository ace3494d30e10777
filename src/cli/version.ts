import { readFileSync } from "node:fs";

/** The package version, read from package.json two folders above this module (in src/ and dist/ alike). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}
