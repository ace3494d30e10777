import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadDotEnv } from "../../src/config/dotenv.ts";
import { tempDir } from "../support/temp.ts";

describe(".env", () => {
  it("loads .env without overriding the real environment", async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, ".env"), "BUB_MODEL=from-dotenv\nBUB_MAX_TOKENS=5\n");
      const env: NodeJS.ProcessEnv = { BUB_MODEL: "real" };
      await loadDotEnv(join(dir.path, ".env"), env);
      assert.deepEqual(env, { BUB_MODEL: "real", BUB_MAX_TOKENS: "5" });
      await loadDotEnv(join(dir.path, "missing.env"), env);
    } finally {
      await dir.cleanup();
    }
  });
});
