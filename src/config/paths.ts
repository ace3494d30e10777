import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * Expands a leading `~` the way a shell does for the current user: `~` is the home
 * directory and `~/x` is `x` under it (`~\x` too on Windows). Any other path is returned
 * unchanged, including `~user/x`: another user's home cannot be looked up portably from
 * Node, so `~user` is an ordinary name (a relative path stays relative).
 *
 * ```ts
 * expandHome("~/.bub");       // "/home/me/.bub"
 * expandHome("~bob/notes");   // "~bob/notes"
 * expandHome("./plugin");     // "./plugin"
 * ```
 *
 * @param home The home directory to expand to; default `os.homedir()`.
 */
export function expandHome(path: string, home: string = homedir()): string {
  if (path === "~") return home;
  if (path.startsWith("~/") || (process.platform === "win32" && path.startsWith("~\\"))) return join(home, path.slice(2));
  return path;
}

/** Bub's home: `BUB_HOME`, else `~/.bub`, `~` expanded, as an absolute path. */
export function bubHome(env: NodeJS.ProcessEnv): string {
  return resolve(expandHome(env.BUB_HOME ?? join(homedir(), ".bub")));
}

/** The managed plugin project: `BUB_PROJECT`, else `<home>/bub-project`. */
export function pluginProjectDir(env: NodeJS.ProcessEnv, home: string): string {
  return resolve(expandHome(env.BUB_PROJECT ?? join(home, "bub-project")));
}
