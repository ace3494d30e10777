import { readFileSync } from "node:fs";

/** The package version, read from package.json two folders above this module (in src/ and dist/ alike). */
export function packageVersion(): string {
  const data: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  if (typeof data === "object" && data !== null && "version" in data && typeof data.version === "string") return data.version;
  throw new Error("bub's package.json names no version");
}
