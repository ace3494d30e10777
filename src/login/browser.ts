/**
 * Opens a URL in the user's browser: the command in `$BROWSER` (its words, then the URL) if
 * set, else the platform's opener (`open`, `xdg-open`, or Windows' URL handler). The
 * command runs detached; whether a browser really shows the page is not known.
 */
import { spawn } from "node:child_process";

/** The command and arguments that open `url`. */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): [string, string[]] {
  const configured = env.BROWSER?.trim();
  if (configured) {
    const [command, ...args] = configured.split(/\s+/);
    return [command, [...args, url]];
  }
  if (platform === "darwin") return ["open", [url]];
  if (platform === "win32") return ["rundll32", ["url.dll,FileProtocolHandler", url]];
  return ["xdg-open", [url]];
}

/**
 * Starts the browser on `url`. Resolves once the command has started.
 *
 * @throws Error when the command cannot be started (no such program).
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const [command, args] = browserCommand(url, env);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { detached: true, stdio: "ignore", env });
    child.once("error", (error) => reject(new Error(`${command}: ${error.message}`)));
    child.once("spawn", () => {
      child.unref();
      resolve();
    });
  });
}
