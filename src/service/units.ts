/**
 * What `bub gateway install` writes: a systemd user unit (Linux) or a launchd agent (macOS)
 * that runs `bub gateway` with this Bub home. Pure text renderers; ./install.ts decides the
 * paths and writes the file. Nothing secret goes in: the gateway reads its tokens and keys
 * from `<BUB_HOME>/config.yml` as it always does.
 */

/** What the service runs and where. */
export interface ServiceSpec {
  /** The Node.js binary (absolute). */
  readonly node: string;
  /** The `bub` script (absolute). */
  readonly bin: string;
  /** Arguments after the script: `gateway` and its options. */
  readonly args: readonly string[];
  /** The gateway's working directory: the agent's workspace. */
  readonly workingDirectory: string;
  /** Variables the service gets (BUB_HOME, PATH): never secrets. */
  readonly environment: Readonly<Record<string, string>>;
  /** Where stdout and stderr go (appended). */
  readonly logFile: string;
  /** Seconds the service manager waits after SIGTERM before it kills the gateway. */
  readonly stopTimeoutSeconds: number;
}

/** The systemd unit's name. */
export const SYSTEMD_UNIT = "bub-gateway.service";
/** The launchd agent's label (its file is `<label>.plist`). */
export const LAUNCHD_LABEL = "bub-ts.gateway";

/** A systemd value with `%` specifiers escaped. */
function systemdText(value: string): string {
  return value.replaceAll("%", "%%");
}

/**
 * A double-quoted systemd value: backslash and quote escaped, `%` doubled, and in ExecStart
 * (where `$NAME` would be expanded) `$` doubled.
 */
function systemdQuoted(value: string, inCommand: boolean): string {
  const escaped = systemdText(value).replaceAll("\\", "\\\\").replaceAll('"', '\\"');
  return `"${inCommand ? escaped.replaceAll("$", "$$$$") : escaped}"`;
}

/** The systemd user unit for `spec`. */
export function renderSystemdUnit(spec: ServiceSpec): string {
  const command = [spec.node, spec.bin, ...spec.args].map((word) => systemdQuoted(word, true)).join(" ");
  const environment = Object.entries(spec.environment).map(([key, value]) => `Environment=${systemdQuoted(`${key}=${value}`, false)}`);
  return [
    "# Written by `bub gateway install`; `bub gateway uninstall` removes it.",
    "# Tokens and keys are not here: the gateway reads them from $BUB_HOME/config.yml.",
    "[Unit]",
    "Description=Bub gateway: serves the enabled channels (Telegram, plugin channels)",
    "StartLimitIntervalSec=300",
    "StartLimitBurst=5",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${command}`,
    `WorkingDirectory=${systemdText(spec.workingDirectory)}`,
    ...environment,
    "Restart=on-failure",
    "RestartSec=10",
    "KillSignal=SIGTERM",
    `TimeoutStopSec=${spec.stopTimeoutSeconds}`,
    `StandardOutput=append:${systemdText(spec.logFile)}`,
    `StandardError=append:${systemdText(spec.logFile)}`,
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

function xml(value: string): string {
  return value.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&apos;");
}

const string = (value: string) => `<string>${xml(value)}</string>`;

/** The launchd agent (property list) for `spec`. */
export function renderLaunchdPlist(spec: ServiceSpec): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    "<!-- Written by `bub gateway install`; `bub gateway uninstall` removes it. Tokens and keys are not here: the gateway reads them from $BUB_HOME/config.yml. -->",
    '<plist version="1.0">',
    "<dict>",
    `  <key>Label</key>${string(LAUNCHD_LABEL)}`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...[spec.node, spec.bin, ...spec.args].map((word) => `    ${string(word)}`),
    "  </array>",
    `  <key>WorkingDirectory</key>${string(spec.workingDirectory)}`,
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...Object.entries(spec.environment).map(([key, value]) => `    <key>${xml(key)}</key>${string(value)}`),
    "  </dict>",
    "  <key>RunAtLoad</key><true/>",
    // Restarted when it exits with a failure; a clean stop (exit 0) stays stopped.
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key><false/>",
    "  </dict>",
    "  <key>ThrottleInterval</key><integer>10</integer>",
    `  <key>ExitTimeOut</key><integer>${spec.stopTimeoutSeconds}</integer>`,
    `  <key>StandardOutPath</key>${string(spec.logFile)}`,
    `  <key>StandardErrorPath</key>${string(spec.logFile)}`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}
