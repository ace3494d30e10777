/**
 * Two `bub gateway` processes from the sources on one PostgreSQL database and one fake
 * Telegram bot, sharing a workspace: what the multi-process gateway tests start. `env` adds
 * to (or overrides) the settings every gateway gets.
 */
import { join } from "node:path";
import { startFakeTelegram, type FakeTelegram } from "../../support/fake-telegram.ts";
import { eventually } from "../../support/eventually.ts";
import { startSourceGateway, type SourceGateway } from "../../support/source-gateway.ts";
import { tempDir } from "../../support/temp.ts";

export interface TwoGateways {
  readonly telegram: FakeTelegram;
  readonly workspace: string;
  readonly gateways: readonly SourceGateway[];
  /** The index of the gateway whose log says `text`, or -1. */
  logging(text: string): number;
  /** Kills both gateways, stops the fake bot and removes the folders. */
  close(): Promise<void>;
}

export async function startTwoGateways(databaseUrl: string, modelUrl: string, env: Record<string, string>): Promise<TwoGateways> {
  const telegram = await startFakeTelegram({ token: "123:TEST" });
  const workspace = await tempDir();
  const homes = [await tempDir(), await tempDir()];
  const shared = {
    BUB_MODEL: "fake:any",
    BUB_API_BASE: modelUrl,
    BUB_API_KEY: "sk-test",
    BUB_TAPE_STORE: "postgres",
    BUB_DATABASE_URL: databaseUrl,
    BUB_TELEGRAM_POLLER_RETRY_SECONDS: "1",
    BUB_LOG_LEVEL: "info",
    ...env,
  };
  const gateways = homes.map((home) => startSourceGateway(workspace.path, telegram, { ...shared, BUB_HOME: join(home.path, ".bub") }));
  const close = async () => {
    for (const gateway of gateways) gateway.kill();
    await Promise.all(gateways.map((gateway) => gateway.exited));
    await telegram.close();
    for (const dir of [workspace, ...homes]) await dir.cleanup();
  };
  const logging = (text: string) => gateways.findIndex((gateway) => gateway.stderr().includes(text));
  try {
    await eventually(() => (gateways.every((gateway) => gateway.stderr().includes("telegram.queue serving bot")) && logging("telegram.poller elected") >= 0 ? true : undefined), "both gateways on the queue, one polling", 60_000);
  } catch (error) {
    await close();
    throw error;
  }
  return { telegram, workspace: workspace.path, gateways, logging, close };
}
