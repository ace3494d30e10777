/**
 * `bub gateway install` and `bub gateway uninstall`: the gateway as a systemd user service
 * or a launchd agent (src/service/). They write or remove one file and print the commands
 * that start or stop the service; they never run systemctl or launchctl.
 */
import type { BubFramework } from "../../kernel/framework.ts";
import { isSecretKey, PROVIDER_KEY_VARIABLES } from "../../config/redaction.ts";

/** Options of `bub gateway install`. */
export interface GatewayInstallOptions {
  /** Show the unit on stdout instead of writing it. */
  print?: boolean;
  /** Channels the service runs (repeatable `--enable-channel`); default the setting. */
  enableChannel?: string[];
}

type IO = { stdout: { write(text: string): unknown }; stderr: { write(text: string): unknown } };

/** Secret-looking variables set in this shell: the service will not have them. */
function shellOnlySecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((name) => env[name] && ((name.startsWith("BUB_") && isSecretKey(name)) || PROVIDER_KEY_VARIABLES.includes(name)))
    .sort();
}

async function planFor(framework: BubFramework, options: GatewayInstallOptions) {
  const [{ servicePlan }, { channelSettings }] = await Promise.all([import("../../service/install.ts"), import("../settings.ts")]);
  const graceSeconds = (await framework.settings.load(channelSettings)).shutdown_grace_seconds;
  const channels = (options.enableChannel ?? []).flatMap((entry) => entry.split(",")).map((name) => name.trim()).filter((name) => name !== "");
  return servicePlan({ home: framework.home, env: framework.env, graceSeconds, gatewayArgs: channels.flatMap((name) => ["--enable-channel", name]) });
}

/** Writes (or with `print` shows) the service file; returns the exit code. */
export async function runGatewayInstall(framework: BubFramework, options: GatewayInstallOptions, io: IO): Promise<number> {
  const plan = await planFor(framework, options);
  if (options.print) {
    io.stdout.write(plan.content);
    return 0;
  }
  const { installService } = await import("../../service/install.ts");
  const replaced = await installService(plan);
  const lines = [
    `${replaced ? "updated" : "wrote"} ${plan.path}`,
    "",
    "Start it (bub does not run these for you):",
    ...plan.startCommands.map((command) => `  ${command}`),
  ];
  if (plan.kind === "systemd") lines.push("Keep it running while you are logged out:", "  loginctl enable-linger $USER");
  lines.push("", `Logs: ${plan.logFile} (the process's output) and ${framework.home}/logs/bub.log`);
  const secrets = shellOnlySecrets(framework.env);
  if (secrets.length > 0) {
    lines.push(
      "",
      `Not in the service: ${secrets.join(", ")} (set in this shell only). The service reads tokens and keys from ${framework.home}/config.yml — put them there ('bub onboard').`,
    );
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Removes the service file; returns the exit code (0 also when there was none). */
export async function runGatewayUninstall(framework: BubFramework, io: IO): Promise<number> {
  const { servicePlan, uninstallService } = await import("../../service/install.ts");
  const plan = servicePlan({ home: framework.home, env: framework.env, bin: "bub" });
  if (!(await uninstallService(plan))) {
    io.stdout.write(`no service file at ${plan.path}; nothing removed\n`);
    return 0;
  }
  io.stdout.write(
    [`removed ${plan.path}`, "", "If it is running, stop it (bub does not run these for you):", ...plan.stopCommands.map((command) => `  ${command}`), ""].join("\n"),
  );
  return 0;
}
