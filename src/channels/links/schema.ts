import { z } from "zod";

/** The `cli` settings section: the terminal's side of identity links. */
export const cliSchema = z.object({
  /** When the local user is linked, `bub chat` and `bub run` use the linked person's shared session. */
  share_linked_sessions: z.boolean().default(false),
});
