/** `bub link [CODE]`, `bub link list`, `bub link remove <identity|person id>`: identity links (docs/channels.md#identity-links). */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import { describeError } from "../../kernel/errors.ts";

/** Registers `bub link`. */
export function registerLinkCommand(app: Command, framework: BubFramework): void {
  const link = app
    .command("link")
    .description("link your terminal with a chat (Telegram, ...): show a one-time code, or type one shown there")
    .argument("[code]", "a code the bot showed you after `,link` in a private chat")
    .addHelpText("after", "\nExamples:\n  $ bub link            # prints a code; send ,link CODE to the bot in a private chat\n  $ bub link K7M2QX9P   # a code the bot gave you\n  $ bub link list\n  $ bub link remove telegram:123456")
    .action(async (code: string | undefined) => {
      const { issueCode, redeemCode } = await import("../../channels/links/codes.ts");
      const { cliIdentity } = await import("../../channels/links/identity.ts");
      const { linkStoreOf } = await import("../../channels/links/session.ts");
      const { codeInstructions } = await import("../../channels/links/tool.ts");
      const identity = cliIdentity();
      try {
        const store = linkStoreOf(framework);
        if (code === undefined) {
          process.stdout.write(`${codeInstructions(await store.update((state) => issueCode(state, identity)), "chat")}\n`);
          return;
        }
        const person = await store.update((state) => redeemCode(state, code, identity));
        process.stdout.write(`Linked: ${person.identities.join(", ")} (${person.id}).\n`);
      } catch (error) {
        process.stderr.write(`bub: ${describeError(error)}\n`);
        process.exitCode = 1;
      }
    });
  link
    .command("list")
    .description("show the linked identities, one person per line")
    .action(async () => {
      const { linkStoreOf } = await import("../../channels/links/session.ts");
      const people = await linkStoreOf(framework).list();
      if (people.length === 0) process.stdout.write("No linked identities. Run `bub link` to link this terminal with a chat.\n");
      for (const person of people) process.stdout.write(`${person.id}  ${person.identities.join(", ")}  (since ${person.created})\n`);
    });
  link
    .command("remove")
    .description("unlink one identity (telegram:123) or a whole person (p_...)")
    .argument("<id>", "an identity or a person id from `bub link list`")
    .action(async (id: string) => {
      const { removeIdentity, removePerson } = await import("../../channels/links/codes.ts");
      const { linkStoreOf } = await import("../../channels/links/session.ts");
      const removed = await linkStoreOf(framework).update((state) => removePerson(state, id) || removeIdentity(state, id));
      if (removed) process.stdout.write(`Unlinked ${id}.\n`);
      else {
        process.stderr.write(`bub: ${id} is not linked — see \`bub link list\` for the identities and person ids.\n`);
        process.exitCode = 1;
      }
    });
}
