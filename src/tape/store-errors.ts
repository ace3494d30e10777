import { BubError } from "../kernel/errors.ts";
import { errorCode, errorMessage } from "../config/thrown.ts";

function codeOf(error: unknown): string | undefined {
  const code = errorCode(error);
  return typeof code === "string" ? code : undefined;
}

/**
 * Turns a file-system failure while `action` (e.g. "append to") on `path` into a BubError that
 * says what happened and what to do. BubErrors pass through unchanged.
 */
export function fileStoreError(error: unknown, action: string, path: string): BubError {
  if (BubError.isInstance(error)) return error;
  const code = codeOf(error);
  const details = { path, code: code ?? "unknown" };
  const head = `Cannot ${action} tape file ${path}`;
  switch (code) {
    case "EROFS":
    case "EACCES":
    case "EPERM":
      return new BubError(
        "config",
        `${head}: the file system is read-only or access is denied (${code}). Make the tapes directory writable, or point BUB_HOME or BUB_TAPE_STORE/BUB_TAPE_DSN at a writable location.`,
        { details, cause: error },
      );
    case "ENOSPC":
    case "EDQUOT":
      return new BubError("temporary", `${head}: the disk is full (${code}). Free some space and retry; entries already on the tape are intact.`, {
        details,
        cause: error,
      });
    case "ENOTDIR":
    case "EISDIR":
    case "EEXIST":
      return new BubError("config", `${head}: a path component is not what it should be (${code}). Check that the tapes directory is a directory.`, {
        details,
        cause: error,
      });
    case "EMFILE":
    case "ENFILE":
      return new BubError("temporary", `${head}: too many open files (${code}). Raise the open-file limit or close other sessions.`, {
        details,
        cause: error,
      });
    default:
      return new BubError("unknown", `${head}: ${errorMessage(error)}`, { details, cause: error });
  }
}
