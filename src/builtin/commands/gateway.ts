/**
 * `bub gateway`: serves the enabled channels (Telegram, plugins' channels) until the
 * process is told to stop, then shuts down gracefully.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import type { Channel } from "../../kernel/types.ts";
import type { ChannelManager } from "../../channels/manager.ts";
import type { GatewayLock } from "../../channels/gateway-lock.ts";
import { listedPluginFailures } from "./listed-failures.ts";

/** Options of `bub gateway`. */
export interface GatewayCommandOptions {
  /** Channels to run (repeatable `--enable-channel`); default the `enabled_channels` setting. */
  enableChannel?: string[];
  /** Seconds running turns get to finish after SIGINT/SIGTERM (default: the `shutdown_grace_seconds` setting, 10). */
  graceSeconds?: number;
}

/** Shown (exit 1) when no channel would run. */
export const NO_CHANNELS =
  "bub: no channels are enabled — configure at least one with 'bub onboard' or '--enable-channel' " +
  "(for Telegram, set BUB_TELEGRAM_TOKEN and BUB_TELEGRAM_ALLOW_USERS)";

/**
 * Runs the channel manager over the enabled channels until `signal` aborts (the command
 * wires SIGINT/SIGTERM to it). Returns the exit code: 1 when no channel is enabled, a
 * plugin listed in `BUB_PLUGINS` / config.yml did not load, or (without `BUB_DATABASE_URL`)
 * another gateway runs on the same `BUB_HOME` (../../channels/gateway-lock.ts).
 *
 * @throws whatever stops a channel from starting (e.g. Telegram without an allowlist).
 */
export async function runGateway(
  framework: BubFramework,
  options: GatewayCommandOptions = {},
  io: { stderr: { write(text: string): unknown } } = process,
  signal?: AbortSignal,
): Promise<number> {
  const failures = listedPluginFailures(framework);
  if (failures !== "") {
    io.stderr.write(failures);
    return 1;
  }
  await framework.settings.prepare();
  const [{ ChannelManager }, { channelSettings }] = await Promise.all([import("../../channels/manager.ts"), import("../settings.ts")]);
  const graceSeconds = options.graceSeconds ?? (await framework.settings.load(channelSettings)).shutdown_grace_seconds;
  const requested = options.enableChannel?.flatMap((entry) => entry.split(",")).filter((name) => name.trim() !== "");
  const manager = new ChannelManager(framework, { enabledChannels: requested?.length ? requested : null, graceSeconds });
  const enabled = manager.enabledChannels();
  if (enabled.length === 0) {
    io.stderr.write(`${NO_CHANNELS}\n`);
    return 1;
  }
  const lock = await takeGatewayLock(framework);
  if ("busy" in lock) {
    io.stderr.write(`${lock.busy}\n`);
    return 1;
  }
  try {
    return await serve(framework, manager, enabled, io, signal);
  } finally {
    await lock.held?.release();
  }
}

/**
 * The gateway lock of the home, or with `BUB_DATABASE_URL` none (several gateways share the
 * queue then); `busy` is the line to exit with when another gateway holds it.
 */
async function takeGatewayLock(framework: BubFramework): Promise<{ held: GatewayLock | null } | { busy: string }> {
  const [{ clusterDatabaseUrl }, { gatewayBusyLine, tryGatewayLock }] = await Promise.all([import("../../channels/cluster/settings.ts"), import("../../channels/gateway-lock.ts")]);
  if (clusterDatabaseUrl(framework.settings) !== "") return { held: null };
  const taken = tryGatewayLock(framework.home);
  return "held" in taken ? taken : { busy: gatewayBusyLine(framework.home, taken.busy.pid) };
}

/** Serves the enabled channels and the schedules until `signal` aborts; returns 0. */
async function serve(framework: BubFramework, manager: ChannelManager, enabled: readonly Channel[], io: { stderr: { write(text: string): unknown } }, signal?: AbortSignal): Promise<number> {
  // Said once every channel has started: a channel that refuses to start (Telegram without
  // an allowlist) leaves only its own line.
  manager.ready().then(
    () => io.stderr.write(`bub gateway: serving ${enabled.map((channel) => channel.name).join(", ")} (Ctrl-C to stop)\n`),
    () => undefined,
  );
  // Scheduled turns (docs/schedule.md) arrive as messages of their sessions.
  const { startGatewaySchedules } = await import("../../schedule/gateway.ts");
  const schedules = await startGatewaySchedules(framework, manager);
  const stopSchedules = () => void schedules.stop();
  signal?.addEventListener("abort", stopSchedules, { once: true });
  // A channel need not keep the event loop busy (one fed by another process, one that only
  // reacts to hooks): without a handle of our own, Node would end the process in the middle
  // of this await (status 13) without stopping the channels.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    await manager.run(signal);
  } finally {
    clearInterval(keepAlive);
    signal?.removeEventListener("abort", stopSchedules);
    await schedules.stop();
  }
  return 0;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Adds `bub gateway` to the program. */
export function registerGatewayCommand(app: Command, framework: BubFramework): void {
  const gateway = app
    .command("gateway")
    .description("serve the enabled channels (Telegram, plugin channels) until stopped")
    .option("--enable-channel <name>", "run this channel (repeatable; default: the enabled_channels setting, 'all')", collect)
    .addHelpText(
      "after",
      `
Examples:
  $ BUB_TELEGRAM_TOKEN=123:abc BUB_TELEGRAM_ALLOW_USERS=alice bub gateway
  $ bub gateway --enable-channel telegram --enable-channel mychannel

SIGINT or SIGTERM stops taking messages and lets running turns finish (up to
BUB_SHUTDOWN_GRACE_SECONDS, default 10 s); a second signal exits at once.`,
    )
    .action(async (options: GatewayCommandOptions) => {
      const stop = new AbortController();
      const onSignal = () => {
        if (stop.signal.aborted) process.exit(130);
        process.stderr.write("bub gateway: stopping (running turns may finish; signal again to exit now)\n");
        stop.abort();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      try {
        const code = await runGateway(framework, options, process, stop.signal);
        if (code !== 0) process.exitCode = code;
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
  registerServiceCommands(gateway, framework);
}

/** `bub gateway install` / `uninstall` (./gateway-service.ts, docs/deploy.md). */
function registerServiceCommands(gateway: Command, framework: BubFramework): void {
  gateway
    .command("install")
    .description("write a systemd user unit (Linux) or launchd agent (macOS) that runs bub gateway with this BUB_HOME")
    .option("--print", "show the unit instead of writing it")
    .option("--enable-channel <name>", "channel the service runs (repeatable; default: the enabled_channels setting)", collect)
    .action(async (_options: unknown, command: Command) => {
      const { runGatewayInstall } = await import("./gateway-service.ts");
      // `gateway` has `--enable-channel` too: it takes the flag wherever it is written.
      process.exitCode = await runGatewayInstall(framework, command.optsWithGlobals(), process);
    });
  gateway
    .command("uninstall")
    .description("remove the service file bub gateway install wrote")
    .action(async () => {
      const { runGatewayUninstall } = await import("./gateway-service.ts");
      process.exitCode = await runGatewayUninstall(framework, process);
    });
}
