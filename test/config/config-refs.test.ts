import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import { expandReferences, isWholeReference } from "../../src/config/config-refs.ts";
import { readConfigFile, writeConfigFile } from "../../src/config/config-file.ts";
import { agentSettings } from "../../src/builtin/settings.ts";
import { captureLogs, tempDir } from "../support/temp.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";

async function withConfig(yaml: string, env: NodeJS.ProcessEnv, body: (bub: BubFramework, file: string) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  try {
    await writeFile(join(dir.path, "config.yml"), yaml);
    const bub = await createBub({ home: dir.path, workspace: dir.path, env });
    await body(bub, join(dir.path, "config.yml"));
  } finally {
    await dir.cleanup();
  }
}

describe("${NAME} references in config.yml", () => {
  it("replaces references in strings, lists and mappings; $${NAME} is literal", () => {
    const env = { KEY: "sk-1", HOST: "127.0.0.1" };
    assert.deepEqual(expandReferences("${KEY}", env), { value: "sk-1", missing: [] });
    assert.deepEqual(expandReferences("http://${HOST}:8080/v1", env).value, "http://127.0.0.1:8080/v1");
    assert.deepEqual(expandReferences("$${KEY} and ${KEY}", env).value, "${KEY} and sk-1");
    assert.deepEqual(expandReferences({ openai: "${KEY}", other: ["${HOST}", 3] }, env).value, { openai: "sk-1", other: ["127.0.0.1", 3] });
    assert.deepEqual(expandReferences("no $ {reference} ${not-a-name}", env).value, "no $ {reference} ${not-a-name}");
    assert.deepEqual(expandReferences(42, env).value, 42);
  });

  it("treats a string naming an unset variable as not set, and reports the variable", () => {
    assert.deepEqual(expandReferences("${GONE}", {}), { value: undefined, missing: ["GONE"] });
    assert.deepEqual(expandReferences("http://${GONE}/v1", {}), { value: undefined, missing: ["GONE"] });
    assert.deepEqual(expandReferences({ a: "${GONE}", b: "kept" }, {}), { value: { b: "kept" }, missing: ["GONE"] });
    assert.deepEqual(expandReferences(["${GONE}", "kept"], {}).value, ["kept"]);
    assert.deepEqual(expandReferences("${EMPTY}", { EMPTY: "" }).value, "");
  });

  it("knows a value that is a single reference", () => {
    assert.equal(isWholeReference("${A_1}"), true);
    assert.equal(isWholeReference("x${A}"), false);
    assert.equal(isWholeReference(3), false);
  });

  it("resolves settings from the referenced variables, converting whole references like environment values", async () => {
    await withConfig("model: ${MODEL_ID}\napi_key: ${MY_KEY}\napi_base:\n  local: http://${HOST}/v1\nmax_steps: ${STEPS}\n", { MODEL_ID: "openai:gpt-x", MY_KEY: "sk-ref", HOST: "h:1", STEPS: "7" }, async (bub) => {
      const agent = await bub.settings.load(agentSettings);
      assert.equal(agent.model, "openai:gpt-x");
      assert.equal(agent.api_key, "sk-ref");
      assert.deepEqual(agent.api_base, { local: "http://h:1/v1" });
      assert.equal(agent.max_steps, 7);
      assert.equal(bub.settings.getValue("api_key"), "sk-ref");
    });
  });

  it("lets a BUB_* variable win over a reference without reading the referenced one", async () => {
    const { logs } = await captureLogs(() =>
      withConfig("api_key: ${UNSET_KEY}\n", { BUB_API_KEY: "sk-env" }, async (bub) => {
        assert.equal((await bub.settings.load(agentSettings)).api_key, "sk-env");
      }),
    );
    assert.deepEqual(logs, []);
  });

  it("ignores a setting whose variable is unset, with a warning naming the file, line and variable", async () => {
    const { logs } = await captureLogs(() =>
      withConfig("max_steps: 3\napi_key: ${UNSET_KEY}\n", {}, async (bub) => {
        const agent = await bub.settings.load(agentSettings);
        assert.equal(agent.api_key, null);
        assert.equal(agent.max_steps, 3);
      }),
    );
    assert.equal(logs.length, 1);
    assert.equal(logs[0]!.level, "warn");
    assert.match(logs[0]!.message, /^'api_key' in .*config\.yml line 2 refers to \$\{UNSET_KEY\}, not set in the environment; the setting is ignored\./);
  });

  it("keeps references as written when the file is read, validated and rewritten", async () => {
    await withConfig("api_key: ${MY_KEY}\ntelegram:\n  token: ${TG_TOKEN}\n", {}, async (bub, file) => {
      const data = (await readConfigFile(file)).data;
      assert.deepEqual(data, { api_key: "${MY_KEY}", telegram: { token: "${TG_TOKEN}" } });
      await bub.settings.validate(data);
      await writeConfigFile(file, data);
      assert.deepEqual((await readConfigFile(file)).data, data);
    });
  });
});
