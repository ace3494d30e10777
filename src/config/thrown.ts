/** What a thrown value says about itself, read without assuming that it is an Error. */

/** The `code` of a thrown value ("ENOENT" from the file system, a status number from some HTTP errors), else undefined. */
export function errorCode(error: unknown): unknown {
  return typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
}

/** The message of a thrown Error, else the thrown value as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The thrown value when it is an Error, else an Error whose message is the value as text. */
export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
