/** The oldest Node.js `bub` runs on; the same range as package.json's `engines`. */
export const MINIMUM_NODE = "22.19";

/**
 * The one line to print when `version` (e.g. `process.versions.node`) is older than
 * {@link MINIMUM_NODE}, or null when it is new enough. Written for old Node.js too: the bin
 * calls it before loading anything else.
 */
export function unsupportedNode(version: string): string | null {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const [needMajor = 0, needMinor = 0] = MINIMUM_NODE.split(".").map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return `bub needs Node.js >= ${MINIMUM_NODE}; this is ${version}`;
}
