/** Driving a program in a real terminal: a tmux server of the test's own, and its one pane `chat`. */
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Whether tmux can be run on this machine (the terminal tests are skipped without it). */
export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

/** A tmux server on its own socket: `tmux(...args)` runs a tmux command; `waitForPane` polls the pane `chat`. */
export function tmuxServer(socket: string) {
  const tmux = async (...args: string[]): Promise<string> => (await run("tmux", ["-L", socket, ...args])).stdout;
  /** Polls the pane until `predicate` holds; fails with the last screen after `deadlineMs`. */
  async function waitForPane(predicate: (screen: string) => boolean, what: string, deadlineMs = 20_000): Promise<string> {
    const deadline = Date.now() + deadlineMs;
    let screen = "";
    while (Date.now() < deadline) {
      screen = await tmux("capture-pane", "-p", "-t", "chat");
      if (predicate(screen)) return screen;
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    assert.fail(`timed out waiting for ${what}; the screen was:\n${screen}`);
  }
  return { tmux, waitForPane };
}
