import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { errorLine, splitAdvice } from "../../src/builtin/error-line.ts";
import { BubError } from "../../src/kernel/errors.ts";
import { forgetSecrets, rememberSecrets } from "../../src/config/redaction.ts";

describe("errorLine", () => {
  it("turns a message's closing instruction into the advice after a dash", () => {
    const error = new BubError("config", "openai:gpt-4o returned HTTP 401: Incorrect API key provided. Check the API key (BUB_OPENAI_API_KEY or BUB_API_KEY).");
    assert.equal(errorLine(error), "bub: openai:gpt-4o returned HTTP 401: Incorrect API key provided — check the API key (BUB_OPENAI_API_KEY or BUB_API_KEY)\n");
  });

  it("adds advice by kind when the message has none, and keeps a message that already has a dash", () => {
    assert.equal(errorLine(new BubError("temporary", "local:m returned HTTP 503: busy.")), "bub: local:m returned HTTP 503: busy — try again in a moment\n");
    assert.equal(errorLine(new Error("boom")), "bub: boom — run again with --verbose to see the cause\n");
    const config = Object.assign(new Error("/h/config.yml line 2: bad — fix the file or run bub onboard"), { name: "ConfigError" });
    assert.equal(errorLine(config), "bub: /h/config.yml line 2: bad — fix the file or run bub onboard\n");
  });

  it("reads a turn error's text: the stage and kind prefixes go, the kind picks the advice", () => {
    assert.equal(errorLine("An error occurred at stage 'run_model': [timeout] local:m sent nothing for 2 s"), "bub: local:m sent nothing for 2 s — try again, or raise the timeout\n");
    assert.equal(errorLine("file not found: x", { kind: "tool" }), "bub: file not found: x — check the command and its arguments (`,help` lists them)\n");
    assert.equal(errorLine("plain words"), "bub: plain words\n");
  });

  it("puts the advice on the first line of a longer message and indents the rest", () => {
    assert.equal(
      errorLine("Tool 'fs.read' argument validation failed.\n- path: expected string", { kind: "tool" }),
      "bub: Tool 'fs.read' argument validation failed — check the command and its arguments (`,help` lists them)\n  - path: expected string\n",
    );
  });

  it("adds details and the chain of causes with verbose only", () => {
    const root = new Error("connect ECONNREFUSED 127.0.0.1:9");
    const middle = new TypeError("fetch failed", { cause: root });
    const error = new BubError("temporary", "local:m: the connection failed", { details: { model: "local:m" }, cause: middle });
    assert.equal(errorLine(error), "bub: local:m: the connection failed — try again in a moment\n");
    assert.equal(
      errorLine(error, { verbose: true }),
      'bub: local:m: the connection failed — try again in a moment\n  details: {"model":"local:m"}\n  caused by: TypeError: fetch failed\n  caused by: connect ECONNREFUSED 127.0.0.1:9\n',
    );
  });

  it("redacts known secrets", () => {
    rememberSecrets([{ name: "api_key", value: "sk-very-secret-123" }]);
    try {
      assert.equal(errorLine(new Error("bad key sk-very-secret-123"), { verbose: true }), "bub: bad key [redacted:api_key] — run again with --verbose to see the cause\n");
    } finally {
      forgetSecrets();
    }
  });

  it("splitAdvice leaves a sentence that is not an instruction in place", () => {
    assert.deepEqual(splitAdvice("It failed. The server said no.", "provider"), {
      what: "It failed. The server said no",
      todo: "check the model id and the request, or try another model",
      more: [],
    });
  });
});
