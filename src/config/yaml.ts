/**
 * The one place YAML text is parsed (`config.yml`, SKILL.md front matter). A syntax error
 * becomes a {@link YamlError} that names the file, line and column and says what to fix.
 */
import { isMap, isScalar, LineCounter, parseDocument, type YAMLError } from "yaml";
import { BubError } from "../kernel/errors.ts";

/** Where the YAML text came from, for error messages. */
export interface YamlSource {
  /** The file named in errors. */
  readonly file: string;
  /** Line of the file the text starts on (1 unless the YAML is embedded, as front matter is). */
  readonly firstLine?: number;
  /** What the reader should do about a syntax error; ends the message after a dash. */
  readonly fix?: string;
}

/** Parsed YAML: the value, and the line each key path sits on. */
export interface ParsedYaml {
  readonly value: unknown;
  /** 1-based line (in the file) of the last key of `path` that exists, or null. */
  lineOf(path: readonly PropertyKey[]): number | null;
}

/** A YAML syntax error; `message` reads `<file> line L, column C: <problem> — <fix>`. */
export class YamlError extends BubError {
  readonly file: string;
  readonly line: number | null;
  readonly column: number | null;
  /** What is wrong, without the position or the fix. */
  readonly problem: string;

  constructor(file: string, line: number | null, column: number | null, problem: string, fix: string) {
    const where = line === null ? file : `${file} line ${line}${column === null ? "" : `, column ${column}`}`;
    super("config", `${where}: ${problem} — ${fix}`, { details: { file, line, column } });
    this.name = "YamlError";
    this.file = file;
    this.line = line;
    this.column = column;
    this.problem = problem;
  }
}

/** A hint for each kind of syntax error people commonly make. */
const HINTS: Partial<Record<YAMLError["code"], string>> = {
  BAD_INDENT: "close the bracket and check the indentation",
  BLOCK_AS_IMPLICIT_KEY: "quote a value that contains ': ', or indent the next line less",
  MULTILINE_IMPLICIT_KEY: "each key must be on one line; check the indentation",
  DUPLICATE_KEY: "remove or rename the repeated key",
  TAB_AS_INDENT: "indent with spaces, not tabs",
  MISSING_CHAR: "add the missing closing character",
  MULTIPLE_DOCS: "keep one document: remove the extra '---' line",
  BAD_SCALAR_START: "quote the value",
  UNEXPECTED_TOKEN: "check the indentation and punctuation there",
  BAD_DQ_ESCAPE: "fix the backslash escape or use single quotes",
};

/** yaml's first message line without its " at line L, column C:" suffix, lower-cased, plus a hint. */
function describeProblem(error: YAMLError): string {
  const first = error.message.split("\n")[0].replace(/ at line \d+, column \d+:?\s*$/, "").trim();
  const text = first.charAt(0).toLowerCase() + first.slice(1);
  const hint = HINTS[error.code];
  return hint ? `${text} (${hint})` : text;
}

/**
 * Parses one YAML document, keeping where its keys are. Throws {@link YamlError} on a
 * syntax error (the first one yaml reports) or an alias without its anchor.
 */
export function parseYamlDocument(text: string, source: YamlSource): ParsedYaml {
  const offset = (source.firstLine ?? 1) - 1;
  const fix = source.fix ?? "fix the YAML";
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const error = document.errors[0];
  if (error) {
    const position = error.linePos?.[0] ?? lineCounter.linePos(error.pos[0]);
    throw new YamlError(source.file, position.line + offset, position.col, describeProblem(error), fix);
  }
  let value: unknown;
  try {
    value = document.toJS();
  } catch (thrown) {
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    const alias = /alias.*?: (\S+)$/.exec(message)?.[1];
    const at = alias === undefined ? -1 : text.indexOf(`*${alias}`);
    const position = at < 0 ? null : lineCounter.linePos(at);
    const problem = alias === undefined ? message : `the alias *${alias} has no anchor &${alias} before it (define the anchor first, or quote the value)`;
    throw new YamlError(source.file, position ? position.line + offset : null, position?.col ?? null, problem, fix);
  }
  return {
    value,
    lineOf(path) {
      let node: unknown = document.contents;
      let line: number | null = null;
      for (const key of path) {
        if (!isMap(node)) return line;
        const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(key));
        if (!pair) return line;
        const start = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
        if (start !== undefined) line = lineCounter.linePos(start).line + offset;
        node = pair.value;
      }
      return line;
    },
  };
}

/** Parses one YAML document to plain values; throws {@link YamlError} naming the file, line and column. */
export function parseYaml(text: string, source: YamlSource): unknown {
  return parseYamlDocument(text, source).value;
}
