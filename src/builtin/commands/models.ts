/**
 * `bub models [PROVIDER]`: the models a provider offers, read from its models endpoint, one
 * `provider:model` id a line (ready for `,model` or `--model`). Without a provider, the
 * models the plugins offer (`provideModelOptions`: the configured model and fallbacks by
 * default) that the configured provider does not list come first, then its sorted list.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";

/**
 * Writes the ids `provider` (default: the configured model's provider) lists to `out`, one a
 * line. Returns the exit code (0).
 *
 * @throws BubError when the provider is unknown, has no key, has no models endpoint, or
 *   cannot be reached (see `listProviderModels`).
 */
export async function printModels(framework: BubFramework, provider: string | undefined, out: { write(text: string): unknown }): Promise<number> {
  await framework.settings.prepare();
  const [{ agentSettings }, { createModelClient }, { parseModelId }] = await Promise.all([
    import("../settings.ts"),
    import("../../llm/model-client.ts"),
    import("../../llm/model-id.ts"),
  ]);
  const settings = await framework.settings.load(agentSettings);
  const chosen = (provider ?? parseModelId(settings.model).provider).trim().toLowerCase();
  // Without a provider, offered models (provideModelOptions) the provider does not list come first.
  const offered = provider === undefined ? (await framework.modelOptions("cli:local")).models.map((choice) => choice.id) : [];
  const client = createModelClient(settings);
  try {
    const listed = (await client.listModels(chosen)).map((model) => `${chosen}:${model}`);
    const extra = offered.filter((id) => !listed.includes(id));
    out.write([...new Set([...extra, ...listed])].map((id) => `${id}\n`).join(""));
    return 0;
  } finally {
    await client.close();
  }
}

/** Adds `bub models` to the program. */
export function registerModelsCommand(app: Command, framework: BubFramework): void {
  app
    .command("models")
    .description("list the models a provider offers (default: the configured model's provider)")
    .argument("[provider]", "provider id: openai, anthropic, openrouter, or one with an API base (local, ollama ...)")
    .addHelpText(
      "after",
      `
The list comes from the provider's models endpoint (GET <api base>/models), with the key
and API base bub uses for model calls. A provider without such an endpoint is reported in
one line. Without a provider, the models offered for the session (the configured model,
the fallbacks, and any a plugin adds) are listed first.

Examples:
  $ bub models
  $ bub models anthropic
  $ BUB_LOCAL_API_BASE=http://127.0.0.1:8080/v1 bub models local`,
    )
    .action(async (provider: string | undefined) => {
      const code = await printModels(framework, provider, process.stdout);
      if (code !== 0) process.exitCode = code;
    });
}
