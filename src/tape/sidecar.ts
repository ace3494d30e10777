/** What separates a session tape's name from the name of one of its sidecars. */
export const SIDECAR_TAPE_MARKER = "__sidecar__";

/**
 * The physical tape name of sidecar `sidecar` mounted on tape `owner`.
 *
 * ```ts
 * sidecarTapeName("ab12__cd34", "spill"); // "ab12__cd34__sidecar__spill"
 * ```
 */
export function sidecarTapeName(owner: string, sidecar: string): string {
  return `${owner}${SIDECAR_TAPE_MARKER}${sidecar}`;
}

/** True for the name of a sidecar tape (it holds {@link SIDECAR_TAPE_MARKER}). */
export function isSidecarTapeName(name: string): boolean {
  return name.includes(SIDECAR_TAPE_MARKER);
}
