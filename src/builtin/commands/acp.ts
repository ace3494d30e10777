/** `bub acp`: bub as an Agent Client Protocol agent on stdin/stdout, for editors (docs/acp.md). */
import type { Command } from "commander";
import type { Readable as ReadableStreamNode, Writable as WritableStreamNode } from "node:stream";
import type { BubFramework } from "../../kernel/framework.ts";

/** bub's version (package.json three folders up, in src/ and dist/ alike). */
async function version(): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  const data: unknown = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8"));
  if (typeof data === "object" && data !== null && "version" in data && typeof data.version === "string") return data.version;
  throw new Error("bub's package.json names no version");
}

/**
 * Serves the editor on stdin/stdout until it closes the connection. A session whose folder
 * is the workspace runs in `framework`; one in another folder gets a framework of its own
 * (that folder's plugins, trust and MCP servers), shut down at the end.
 */
export async function runAcp(framework: BubFramework, io: { input: ReadableStreamNode; output: WritableStreamNode }): Promise<void> {
  const [{ serveAcp }, { Readable, Writable }, { realpath }, { createBub }] = await Promise.all([
    import("../../acp/server.ts"),
    import("node:stream"),
    import("node:fs/promises"),
    import("../create.ts"),
  ]);
  const real = (path: string) => realpath(path).catch(() => path);
  const home = await real(framework.workspace);
  const others = new Map<string, Promise<BubFramework>>();
  const frameworkFor = async (cwd: string): Promise<BubFramework> => {
    const folder = await real(cwd);
    if (folder === home) return framework;
    let made = others.get(folder);
    if (!made) others.set(folder, (made = createBub({ workspace: folder, home: framework.home, env: framework.env })));
    return made;
  };
  try {
    await serveAcp({
      frameworkFor,
      input: Readable.toWeb(io.input),
      output: Writable.toWeb(io.output),
      version: await version(),
    });
  } finally {
    for (const made of others.values()) await (await made.catch(() => null))?.shutdown();
  }
}

/** Adds `bub acp` to the program. */
export function registerAcpCommand(app: Command, framework: BubFramework): void {
  app
    .command("acp")
    .description("be the agent of an editor that speaks the Agent Client Protocol (on stdin/stdout)")
    .addHelpText(
      "after",
      `
The editor starts \`bub acp\` and talks to it over stdin/stdout; nothing else is written to
stdout. Each editor session is a bub session (acp:<id>) with its own tape. With
BUB_APPROVAL=ask the editor is asked before bash and writes outside the workspace.

Example (Zed, settings.json):
  "agent_servers": { "Bub": { "command": "bub", "args": ["acp"] } }`,
    )
    .action(async () => {
      await runAcp(framework, { input: process.stdin, output: process.stdout });
    });
}
