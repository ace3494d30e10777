/**
 * `fs.read`, `fs.write` and `fs.edit`, on the files of the session's sandbox. Relative
 * paths resolve against the workspace; paths outside it are allowed, and every message
 * names the resolved absolute path.
 */
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import type { Sandbox, SandboxFileInfo, SandboxFileKind } from "../../kernel/sandbox.ts";
import { withThousands } from "../../tape/python-format.ts";
import { defineTool, type Tool } from "../tool.ts";
import { sandboxOf } from "./context.ts";

/** Files larger than this are read only in parts (with `limit`); no call returns more text than this. */
export const FS_READ_MAX_BYTES = 1024 * 1024;
/** `fs.edit` reads the whole file into memory: larger files are refused. */
export const FS_EDIT_MAX_BYTES = 16 * 1024 * 1024;
/** How many leading bytes are checked for NUL to tell a binary file. */
const BINARY_SNIFF_BYTES = 8192;
const LINE_BREAK = /\r\n|\r|\n/;

function fsError(error: unknown, path: string): BubError {
  if (BubError.isInstance(error)) return error;
  const thrown = typeof error === "object" && error !== null ? error : null;
  const code = thrown && "code" in thrown ? thrown.code : undefined;
  if (code === "ENOENT") return new BubError("not_found", `file not found: ${path}`);
  if (code === "EISDIR") return new BubError("invalid_input", `${path} is a directory, not a file`);
  if (code === "EACCES" || code === "EPERM") return new BubError("tool", `permission denied: ${path}`);
  if (code === "ENOTDIR") return new BubError("not_found", `a parent of ${path} is not a directory`);
  const message = thrown && "message" in thrown ? thrown.message : undefined;
  return new BubError("tool", `cannot access ${path}: ${message ?? String(error)}`, { cause: error });
}

const SPECIAL_KINDS: Record<Exclude<SandboxFileKind, "file">, string> = {
  directory: "a directory",
  fifo: "a FIFO (named pipe)",
  socket: "a socket",
  device: "a device",
  other: "not a regular file",
};

/** What a non-regular file is, for error messages; null for a regular file. */
function specialKind(kind: SandboxFileKind): string | null {
  return kind === "file" ? null : SPECIAL_KINDS[kind];
}

/** The error for `path` being a FIFO, device, socket or directory: `tool` works on regular files only. */
function notRegular(path: string, kind: string, tool: string): BubError {
  if (kind === "a directory") return new BubError("invalid_input", `${path} is a directory, not a file`);
  return new BubError("invalid_input", `${path} is ${kind}, not a regular file; ${tool} works on regular files only`);
}

/**
 * The size of the regular file at `path`, refusing anything else: checked before reading
 * (opening a FIFO would wait for a writer, a device may act on being opened); the
 * sandbox's `readFile` checks again on the file it opens.
 */
async function regularFile(sandbox: Sandbox, path: string, tool: string): Promise<SandboxFileInfo> {
  const info = await sandbox.stat(path).catch((error: unknown) => {
    throw fsError(error, path);
  });
  if (!info) throw new BubError("not_found", `file not found: ${path}`);
  const kind = specialKind(info.kind);
  if (kind) throw notRegular(path, kind, tool);
  return info;
}

/**
 * Where a write to `target` lands, links followed ({@link Sandbox.realPath}); `target` itself
 * when the sandbox cannot tell (one that follows only existing paths, a folder it may not
 * read): the write then fails or goes where the sandbox's own write goes.
 * @throws BubError a sandbox's refusal, such as the host's for a link loop.
 */
async function destination(sandbox: Sandbox, target: string): Promise<string> {
  try {
    return await sandbox.realPath(target);
  } catch (error) {
    if (BubError.isInstance(error)) throw error;
    return target;
  }
}

/**
 * Up to `max` bytes from the start of `chunks`, and whether there is more after them. The
 * iteration stops (releasing the file) once past the bound: a file may be bigger than its
 * stat size said, and some report 0 (`/proc`).
 */
async function readAtMost(chunks: AsyncIterable<Uint8Array>, max: number): Promise<{ bytes: Buffer; more: boolean }> {
  const parts: Uint8Array[] = [];
  let filled = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    filled += chunk.length;
    if (filled > max) break;
  }
  const bytes = Buffer.concat(parts, filled);
  return { bytes: bytes.subarray(0, Math.min(filled, max)), more: filled > max };
}

function decodeText(bytes: Buffer, path: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new BubError("invalid_input", `${path} is not UTF-8 text (${withThousands(bytes.length)} bytes); fs.read reads text files only`);
  }
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * Lines `[offset, offset + limit)` of a big file, scanned in chunks and stopped early. At
 * most `maxBytes` of text are kept: past that the result ends with a note saying where to
 * read on, so neither a huge `limit` nor one endless line brings the file into memory.
 */
async function readLineRange(chunks: AsyncIterable<Uint8Array>, path: string, offset: number, limit: number, maxBytes: number): Promise<string> {
  if (limit <= 0) return "";
  const lines: Buffer[][] = [];
  let current: Buffer[] = [];
  let currentBytes = 0;
  let kept = 0;
  let line = 0;
  let afterCR = false;
  let cut = false;
  const keep = (bytes: Uint8Array): void => {
    if (line < offset || bytes.length === 0) return;
    const room = maxBytes - kept;
    if (bytes.length > room) {
      bytes = bytes.subarray(0, room);
      cut = true;
    }
    current.push(Buffer.from(bytes)); // a copy: a sandbox may reuse its chunks
    currentBytes += bytes.length;
    kept += bytes.length;
  };
  scan: for await (const chunk of chunks) {
    const bytesRead = chunk.length;
    let start = 0;
    for (let index = 0; index < bytesRead; index++) {
      const byte = chunk[index];
      if (afterCR) {
        afterCR = false;
        if (byte === LF) {
          start = index + 1;
          continue;
        }
      }
      if (byte !== LF && byte !== CR) continue;
      keep(chunk.subarray(start, index));
      if (cut) break scan;
      if (line >= offset) lines.push(current);
      current = [];
      currentBytes = 0;
      line++;
      start = index + 1;
      afterCR = byte === CR;
      if (line >= offset + limit) break scan;
    }
    keep(chunk.subarray(start, bytesRead));
    if (cut) break;
  }
  if (currentBytes > 0 && line >= offset && line < offset + limit) lines.push(current);
  const text = Buffer.concat(lines.map((parts, index) => (index === 0 ? Buffer.concat(parts) : Buffer.concat([Buffer.from("\n"), ...parts]))));
  if (!cut) return decodeText(text, path);
  let decoded: string;
  try {
    // Cut anywhere: an incomplete character at the end is dropped, not an error.
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(text, { stream: true });
  } catch {
    throw new BubError("invalid_input", `${path} is not UTF-8 text; fs.read reads text files only`);
  }
  const where = currentBytes > 0 ? `in line ${line}, which is cut there; read on with offset=${line + 1}` : `before line ${line}; read on with offset=${line}`;
  return `${decoded}\n[fs.read stopped after ${withThousands(maxBytes)} bytes, ${where}]`;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(LINE_BREAK);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The three file tools. */
export function fsTools(): Tool[] {
  const read = defineTool({
    name: "fs.read",
    description:
      "Read a UTF-8 text file. offset is the first line (0-based) and limit the number of lines; " +
      "files over 1 MiB must be read in parts with limit.",
    parameters: () => z.object({
      path: z.string().describe("File path; relative paths are resolved against the workspace."),
      offset: z.number().int().min(0).default(0).describe("First line to return, 0-based."),
      limit: z.number().int().min(0).nullable().optional().describe("Most lines to return; default all."),
    }),
    context: true,
    async run({ path, offset, limit }, context) {
      const sandbox = sandboxOf(context);
      const target = sandbox.resolvePath(path);
      const { size } = await regularFile(sandbox, target, "fs.read");
      // Never more than the bound into memory, whatever the size says (a file may grow).
      const head = await readAtMost(sandbox.readFile(target), FS_READ_MAX_BYTES).catch((error: unknown) => Promise.reject(fsError(error, target)));
      if (head.bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
        throw new BubError("invalid_input", `${target} is a binary file (${withThousands(size)} bytes); fs.read reads text files only`);
      }
      if (head.more) {
        if (limit === null || limit === undefined) {
          throw new BubError(
            "invalid_input",
            `${target} is ${withThousands(Math.max(size, FS_READ_MAX_BYTES + 1))} bytes, more than fs.read returns at once (${withThousands(FS_READ_MAX_BYTES)} bytes); ` +
              `read it in parts with offset and limit, e.g. offset=${offset} limit=200`,
          );
        }
        return await readLineRange(sandbox.readFile(target), target, offset, limit, FS_READ_MAX_BYTES).catch((error: unknown) => Promise.reject(fsError(error, target)));
      }
      const bytes = head.bytes;
      const lines = splitLines(decodeText(bytes, target));
      const start = Math.min(offset, lines.length);
      const end = limit === null || limit === undefined ? lines.length : Math.min(lines.length, start + limit);
      return lines.slice(start, end).join("\n");
    },
  });

  const write = defineTool({
    name: "fs.write",
    description: "Write a UTF-8 text file, creating parent directories; replaces the file if it exists.",
    parameters: () => z.object({
      path: z.string().describe("File path; relative paths are resolved against the workspace."),
      content: z.string().describe("The whole new content."),
    }),
    context: true,
    async run({ path, content }, context) {
      const sandbox = sandboxOf(context);
      const target = sandbox.resolvePath(path);
      // Through links (dangling ones too) the file written is where they lead: work on that one.
      const real = await destination(sandbox, target);
      // Writing to a FIFO would wait for a reader, to a device would write to the device.
      const existing = await sandbox.stat(real).catch(() => null);
      const kind = existing ? specialKind(existing.kind) : null;
      if (kind) throw notRegular(real, kind, "fs.write");
      try {
        await sandbox.writeFile(real, content);
      } catch (error) {
        throw fsError(error, real);
      }
      return real === target ? `wrote: ${target}` : `wrote: ${real} (through the symlink ${target})`;
    },
  });

  const edit = defineTool({
    name: "fs.edit",
    description:
      "Replace text in a file: every occurrence of old (searched from line start, 0-based) becomes new.",
    parameters: () => z.object({
      path: z.string().describe("File path; relative paths are resolved against the workspace."),
      old: z.string().min(1).describe("Exact text to replace."),
      new: z.string().describe("Replacement text."),
      start: z.number().int().min(0).default(0).describe("First line (0-based) to search from."),
    }),
    context: true,
    async run(args, context) {
      const sandbox = sandboxOf(context);
      const target = sandbox.resolvePath(args.path);
      const info = await regularFile(sandbox, target, "fs.edit");
      const whole = await readAtMost(sandbox.readFile(target), FS_EDIT_MAX_BYTES).catch((error: unknown) => Promise.reject(fsError(error, target)));
      if (whole.more) {
        throw new BubError(
          "invalid_input",
          `${target} is ${withThousands(Math.max(info.size, FS_EDIT_MAX_BYTES + 1))} bytes, more than fs.edit edits (${withThousands(FS_EDIT_MAX_BYTES)} bytes); change it with bash (sed, a script) instead`,
        );
      }
      const bytes = whole.bytes;
      if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) throw new BubError("invalid_input", `${target} is a binary file; fs.edit edits text files only`);
      const lines = splitLines(decodeText(bytes, target));
      const before = lines.slice(0, args.start);
      const region = lines.slice(args.start).join("\n");
      if (!region.includes(args.old)) {
        throw new BubError("invalid_input", `'${args.old}' not found in ${target} from line ${args.start}`);
      }
      const replaced = region.replaceAll(args.old, () => args.new);
      const text = before.length > 0 ? `${before.join("\n")}\n${replaced}` : replaced;
      // Through a symlink the file changed is the link's target: name that one.
      const real = await destination(sandbox, target);
      try {
        await sandbox.writeFile(real, text);
      } catch (error) {
        throw fsError(error, real);
      }
      return real === target ? `edited: ${target}` : `edited: ${real} (through the symlink ${target})`;
    },
  });

  return [read, write, edit];
}
