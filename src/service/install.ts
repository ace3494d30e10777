/**
 * `bub gateway install` / `uninstall`: where the service file goes on this platform, what it
 * says (./units.ts), writing and removing it, and the commands that start and stop it —
 * printed for the user to run; bub never calls systemctl or launchctl itself.
 */
import { realpathSync } from "node:fs";
import { access, mkdir, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { BubError } from "../kernel/errors.ts";
import { LAUNCHD_LABEL, renderLaunchdPlist, renderSystemdUnit, SYSTEMD_UNIT, type ServiceSpec } from "./units.ts";

/** The service managers bub writes files for. */
export type ServiceKind = "systemd" | "launchd";

/** A service file to write, and how to start and stop it. */
export interface ServicePlan {
  readonly kind: ServiceKind;
  /** The file (absolute). */
  readonly path: string;
  /** Its text. */
  readonly content: string;
  /** The log file stdout and stderr are appended to. */
  readonly logFile: string;
  /** Commands that start it once written. */
  readonly startCommands: readonly string[];
  /** Commands that stop it (before or after its file is removed). */
  readonly stopCommands: readonly string[];
}

/** What the plan is made from; every field defaults to this process's. */
export interface ServicePlanInput {
  readonly platform?: NodeJS.Platform;
  readonly env?: NodeJS.ProcessEnv;
  /** The Bub home the service uses. */
  readonly home: string;
  readonly node?: string;
  /** The running `bub` script (symlinks resolved). */
  readonly bin?: string;
  readonly workingDirectory?: string;
  /** `gateway` options to pass on (e.g. `--enable-channel telegram`). */
  readonly gatewayArgs?: readonly string[];
  /** Seconds the gateway lets turns finish after SIGTERM (the service manager waits 20 s more). */
  readonly graceSeconds?: number;
}

/** The service manager of `platform`, or a one-line error for another platform. */
export function serviceKind(platform: NodeJS.Platform): ServiceKind {
  if (platform === "linux") return "systemd";
  if (platform === "darwin") return "launchd";
  throw new BubError("invalid_input", `bub gateway install writes a systemd unit (Linux) or a launchd agent (macOS), not a ${platform} service — run 'bub gateway' under your own supervisor`);
}

/** The running script, symlinks resolved (an npm global bin is a link to dist/bin/bub.js). */
function runningBin(): string {
  const script = process.argv[1];
  if (!script) throw new BubError("invalid_input", "cannot tell which bub script is running — run bub gateway install through the bub command");
  try {
    return realpathSync(script);
  } catch {
    return resolve(script);
  }
}

/** The plan for this platform (see {@link ServicePlanInput}). */
export function servicePlan(input: ServicePlanInput): ServicePlan {
  const env = input.env ?? process.env;
  const kind = serviceKind(input.platform ?? process.platform);
  const userHome = env.HOME?.trim() || homedir();
  const logFile = join(input.home, "logs", "gateway.log");
  const environment: Record<string, string> = { BUB_HOME: input.home };
  // The agent's shell needs the user's tools; a service manager's PATH is minimal.
  if (env.PATH) environment.PATH = env.PATH;
  const spec: ServiceSpec = {
    node: input.node ?? process.execPath,
    bin: input.bin ?? runningBin(),
    args: ["gateway", ...(input.gatewayArgs ?? [])],
    workingDirectory: input.workingDirectory ?? process.cwd(),
    environment,
    logFile,
    stopTimeoutSeconds: Math.ceil((input.graceSeconds ?? 10) + 20),
  };
  if (kind === "systemd") {
    const configHome = env.XDG_CONFIG_HOME?.trim() || join(userHome, ".config");
    return {
      kind,
      path: join(configHome, "systemd", "user", SYSTEMD_UNIT),
      content: renderSystemdUnit(spec),
      logFile,
      startCommands: ["systemctl --user daemon-reload", `systemctl --user enable --now ${SYSTEMD_UNIT}`, `systemctl --user status ${SYSTEMD_UNIT}`],
      stopCommands: [`systemctl --user stop ${SYSTEMD_UNIT}`, "systemctl --user daemon-reload"],
    };
  }
  const path = join(userHome, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
  return {
    kind,
    path,
    content: renderLaunchdPlist(spec),
    logFile,
    startCommands: [`launchctl bootstrap gui/$(id -u) ${path}`, `launchctl print gui/$(id -u)/${LAUNCHD_LABEL}`],
    stopCommands: [`launchctl bootout gui/$(id -u)/${LAUNCHD_LABEL}`],
  };
}

/** Writes the plan's file (and the log folder); true when it replaced an existing file. */
export async function installService(plan: ServicePlan): Promise<boolean> {
  await mkdir(dirname(plan.path), { recursive: true });
  await mkdir(dirname(plan.logFile), { recursive: true, mode: 0o700 });
  const existed = await access(plan.path).then(
    () => true,
    () => false,
  );
  await writeFile(plan.path, plan.content, { mode: 0o644 });
  return existed;
}

/**
 * Removes the plan's file and, for systemd, the `default.target.wants` link `enable` made;
 * false when there was no file.
 */
export async function uninstallService(plan: ServicePlan): Promise<boolean> {
  const existed = await rm(plan.path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
  if (plan.kind === "systemd") await rm(join(dirname(plan.path), "default.target.wants", SYSTEMD_UNIT), { force: true });
  return existed;
}
