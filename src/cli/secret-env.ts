/**
 * Keeps secrets out of `bub`'s own environment block. `/proc/<pid>/environ` shows the
 * environment a process image started with; later changes to `process.env` live on the heap
 * only. So when `bub` starts with secret variables, it moves them to a handoff file,
 * re-executes itself without them (`process.execve`, same pid), and the new image reads the
 * file back into `process.env` and deletes it at once (docs/security.md, *Secrets*).
 *
 * The handoff file is encrypted (AES-256-GCM) with a key that travels in the handoff
 * variable, so reading the file during the moment it exists gives nothing without also
 * reading the new image's environment.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { environmentSecrets, isSecretKey, PASSTHROUGH_VARIABLE } from "../config/redaction.ts";

/** The variable naming the handoff file and its key: `<path>#<key, base64url>`. */
export const HANDOFF_VARIABLE = "BUB_SECRET_HANDOFF";

/**
 * The variables moved out of the environment block: every secret `bub` knows from its
 * environment (`BUB_*` secret names, the provider key variables) and every other variable
 * whose name looks secret (`GITHUB_TOKEN`, a `${VAR}` that `config.yml` refers to).
 */
export function secretVariableNames(env: NodeJS.ProcessEnv): string[] {
  const names = new Set(environmentSecrets(env).map((secret) => secret.name));
  for (const [name, value] of Object.entries(env)) {
    if (value && name !== PASSTHROUGH_VARIABLE && name !== HANDOFF_VARIABLE && isSecretKey(name)) names.add(name);
  }
  return [...names].sort();
}

/** Where the handoff folder goes: `/dev/shm` (memory, never a disk) when writable, else the temporary folder. */
function handoffBase(): string {
  try {
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm";
  } catch {
    return tmpdir();
  }
}

/**
 * Writes `secrets` to a fresh 0600 file in a fresh 0700 folder and returns the handoff
 * variable's value.
 */
export function writeHandoff(secrets: Record<string, string>, base = handoffBase()): string {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(secrets), "utf8"), cipher.final(), cipher.getAuthTag()]);
  const folder = mkdtempSync(join(base, "bub-"));
  const file = join(folder, "secrets");
  try {
    writeFileSync(file, sealed, { mode: 0o600, flag: "wx" });
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return `${file}#${key.toString("base64url")}`;
}

/**
 * Reads and deletes (file and folder, before anything else) the handoff named by `value`.
 * @throws Error when the file is missing, unreadable or not what {@link writeHandoff} wrote.
 */
export function readHandoff(value: string): Record<string, string> {
  const hash = value.lastIndexOf("#");
  if (hash <= 0) throw new Error("the handoff variable is malformed");
  const file = value.slice(0, hash);
  const key = Buffer.from(value.slice(hash + 1), "base64url");
  let sealed: Buffer;
  try {
    sealed = readFileSync(file);
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
  if (key.length !== 32 || sealed.length < 28) throw new Error("the handoff file is not bub's");
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  const text = Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString("utf8");
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("the handoff file is not bub's");
  const secrets: Record<string, string> = {};
  for (const [name, secret] of Object.entries(parsed)) if (typeof secret === "string") secrets[name] = secret;
  return secrets;
}

/** What {@link keepSecretsOffEnvironment} needs from the process (tests pass their own). */
export interface SecretEnvProcess {
  readonly env: NodeJS.ProcessEnv;
  readonly execPath: string;
  readonly execArgv: readonly string[];
  /** The script, `process.argv[1]`. */
  readonly script: string;
  /** The arguments after the script. */
  readonly args: readonly string[];
  /** `process.execve`, where Node.js has it (>= 22.15, not Windows). */
  readonly execve?: (file: string, args: string[], env: Record<string, string>) => never;
  readonly warn: (line: string) => void;
}

/**
 * Run first by the `bub` binary. With a handoff variable: puts the handed secrets back into
 * `env` (heap only) and answers null, or answers the one line to print before exiting 1 when
 * the handoff cannot be read (never runs without its secrets silently). Without one, when
 * `env` holds secret variables and `execve` exists: re-executes the same script without them
 * and does not return. Otherwise answers null and changes nothing (a handoff that cannot be
 * written leaves the secrets where they are, with a warning).
 */
export function keepSecretsOffEnvironment(proc: SecretEnvProcess): string | null {
  const handed = proc.env[HANDOFF_VARIABLE];
  if (handed !== undefined) {
    delete proc.env[HANDOFF_VARIABLE];
    try {
      Object.assign(proc.env, readHandoff(handed));
      return null;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return `bub: cannot read the secrets handed over at start (${reason}) — start bub again`;
    }
  }
  const names = secretVariableNames(proc.env);
  if (names.length === 0 || !proc.execve) return null;
  const secrets: Record<string, string> = {};
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(proc.env)) {
    if (value === undefined) continue;
    if (names.includes(name)) secrets[name] = value;
    else clean[name] = value;
  }
  let handoff: string;
  try {
    handoff = writeHandoff(secrets);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    proc.warn(`bub: warning: cannot move the secrets out of the process environment (${reason}) — they stay readable in /proc/${process.pid}/environ`);
    return null;
  }
  try {
    return proc.execve(proc.execPath, [proc.execPath, ...proc.execArgv, proc.script, ...proc.args], { ...clean, [HANDOFF_VARIABLE]: handoff });
  } catch (error) {
    rmSync(dirname(handoff.slice(0, handoff.lastIndexOf("#"))), { recursive: true, force: true });
    const reason = error instanceof Error ? error.message : String(error);
    proc.warn(`bub: warning: cannot restart without the secrets in the process environment (${reason}) — they stay readable in /proc/${process.pid}/environ`);
    return null;
  }
}
