/**
 * `fs.read`, `fs.write` and `fs.edit`. Relative paths resolve against the workspace; paths
 * outside it are allowed, and every message names the resolved absolute path.
 */
import { createReadStream } from "node:fs";
import { lstat, mkdir, open, readFile, realpath, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import { withThousands } from "../../tape/python-format.ts";
import { defineTool, type Tool } from "../tool.ts";
import { resolveToolPath } from "./context.ts";

/** Files larger than this are read only in parts (with `limit`). */
export const FS_READ_MAX_BYTES = 1024 * 1024;
/** How many leading bytes are checked for NUL to tell a binary file. */
const BINARY_SNIFF_BYTES = 8192;
const LINE_BREAK = /\r\n|\r|\n/;

function fsError(error: unknown, path: string): BubError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === "ENOENT") return new BubError("not_found", `file not found: ${path}`);
  if (code === "EISDIR") return new BubError("invalid_input", `${path} is a directory, not a file`);
  if (code === "EACCES" || code === "EPERM") return new BubError("tool", `permission denied: ${path}`);
  if (code === "ENOTDIR") return new BubError("not_found", `a parent of ${path} is not a directory`);
  return new BubError("tool", `cannot access ${path}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
}

async function sniffBinary(path: string): Promise<boolean> {
  const file = await open(path, "r");
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(BINARY_SNIFF_BYTES), 0, BINARY_SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await file.close();
  }
}

function decodeText(bytes: Buffer, path: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new BubError("invalid_input", `${path} is not UTF-8 text (${withThousands(bytes.length)} bytes); fs.read reads text files only`);
  }
}

/** Lines `[offset, offset + limit)` of a big file, read as a stream and stopped early. */
async function readLineRange(path: string, offset: number, limit: number): Promise<string> {
  const lines: string[] = [];
  if (limit <= 0) return "";
  const stream = createReadStream(path, { encoding: "utf8" });
  const reader = createInterface({ input: stream, crlfDelay: Infinity });
  let index = 0;
  try {
    for await (const line of reader) {
      if (index >= offset) lines.push(line);
      index++;
      if (lines.length >= limit) break;
    }
  } finally {
    reader.close();
    stream.destroy();
  }
  return lines.join("\n");
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
    async run({ path, offset, limit }, { state }) {
      const target = resolveToolPath(state, path);
      const info = await stat(target).catch((error: unknown) => {
        throw fsError(error, target);
      });
      if (info.isDirectory()) throw new BubError("invalid_input", `${target} is a directory, not a file`);
      if (await sniffBinary(target).catch((error: unknown) => Promise.reject(fsError(error, target)))) {
        throw new BubError("invalid_input", `${target} is a binary file (${withThousands(info.size)} bytes); fs.read reads text files only`);
      }
      if (info.size > FS_READ_MAX_BYTES) {
        if (limit === null || limit === undefined) {
          throw new BubError(
            "invalid_input",
            `${target} is ${withThousands(info.size)} bytes, more than fs.read returns at once (${withThousands(FS_READ_MAX_BYTES)} bytes); ` +
              `read it in parts with offset and limit, e.g. offset=${offset} limit=200`,
          );
        }
        return readLineRange(target, offset, limit);
      }
      const bytes = await readFile(target).catch((error: unknown) => {
        throw fsError(error, target);
      });
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
    async run({ path, content }, { state }) {
      const target = resolveToolPath(state, path);
      try {
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, content, "utf8");
      } catch (error) {
        throw fsError(error, target);
      }
      return `wrote: ${target}`;
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
    async run(args, { state }) {
      const target = resolveToolPath(state, args.path);
      const bytes = await readFile(target).catch((error: unknown) => {
        throw fsError(error, target);
      });
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
      const linked = await lstat(target).then((info) => info.isSymbolicLink(), () => false);
      const real = linked ? await realpath(target).catch(() => target) : target;
      try {
        await writeFile(real, text, "utf8");
      } catch (error) {
        throw fsError(error, real);
      }
      return real === target ? `edited: ${target}` : `edited: ${real} (through the symlink ${target})`;
    },
  });

  return [read, write, edit];
}
