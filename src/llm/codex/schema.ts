import { z } from "zod";
import { CODEX_DEFAULTS } from "./settings.ts";

const url = (fallback: string) => z.string().url("expected an http(s) URL").default(fallback);

/** The `codex` section of config.yml (env `BUB_CODEX_*`). */
export const codexSchema = z.object({
  home: z.string().nullable().default(null),
  authorize_url: url(CODEX_DEFAULTS.authorize_url),
  token_url: url(CODEX_DEFAULTS.token_url),
  base_url: url(CODEX_DEFAULTS.base_url),
  redirect_uri: url(CODEX_DEFAULTS.redirect_uri),
  client_id: z.string().min(1).default(CODEX_DEFAULTS.client_id),
});
