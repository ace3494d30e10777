/** `bub trust [PATH]`: lets a folder's own plugins and .env load (docs/security.md, "Workspace trust"). */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/** Options of `bub trust`. */
export interface TrustCommandOptions {
  revoke?: boolean;
  list?: boolean;
}

/**
 * Trusts, revokes or lists folders in `<home>/trust.json`; `path` defaults to `workspace`.
 * Returns the exit code.
 */
export async function runTrustCommand(home: string, workspace: string, path: string | undefined, options: TrustCommandOptions, out: { write(text: string): unknown }): Promise<number> {
  const { listTrust, revokeTrust, trustFolder, trustFile, realFolder } = await import("../../config/trust.ts");
  const { resolve } = await import("node:path");
  const { expandHome } = await import("../../config/paths.ts");
  if (options.list) {
    const entries = await listTrust(home);
    if (entries.length === 0) out.write(`No trusted folders (${trustFile(home)}).\n`);
    for (const { entry, current } of entries) out.write(`${entry.path}  ${current ? `trusted since ${entry.trustedAt}` : "changed since trusted (package.json, .env or .mcp.json): not trusted until `bub trust` again"}\n`);
    return 0;
  }
  const folder = resolve(workspace, expandHome(path ?? workspace));
  if (options.revoke) {
    const removed = await revokeTrust(home, folder);
    out.write(removed ? `No longer trusted: ${await realFolder(folder)}\n` : `${await realFolder(folder)} was not trusted.\n`);
    return 0;
  }
  const { stat } = await import("node:fs/promises");
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new Error(`cannot trust ${folder}: not a folder`);
  const entry = await trustFolder(home, folder);
  const present = [entry.packageJson && "package.json", entry.env && ".env", entry.mcpJson && ".mcp.json"].filter((file): file is string => Boolean(file));
  const files = present.length > 1 ? `${present.slice(0, -1).join(", ")} and ${present.at(-1)}` : (present[0] ?? "");
  out.write(`Trusted ${entry.path}${files ? `: its ${files} ${present.length === 1 ? "loads" : "load"} from now on, until ${present.length === 1 ? "it changes" : present.length === 2 ? "either file changes" : "any of them changes"}` : ""}.\n`);
  return 0;
}

/** Adds `bub trust` to the program. */
export function registerTrustCommand(app: Command, framework: BubFramework): void {
  app
    .command("trust")
    .description("let a folder's own plugins (package.json) and .env load")
    .argument("[path]", "the folder (default: the workspace)")
    .option("--revoke", "stop trusting the folder")
    .option("--list", "show the trusted folders")
    .addHelpText(
      "after",
      `
Trust is kept in <BUB_HOME>/trust.json under the folder's real path, with a hash of its
package.json and .env: when either changes, the folder is untrusted again.

Examples:
  $ bub trust                    # the workspace
  $ bub trust ~/code/my-agent
  $ bub trust --revoke
  $ bub trust --list`,
    )
    .action(async (path: string | undefined, options: TrustCommandOptions) => {
      const code = await runTrustCommand(framework.home, framework.workspace, path, options, process.stdout);
      if (code !== 0) process.exitCode = code;
    });
}
