// Messages a user can act on when the model's server misbehaves: a malformed event stream
// fails the step with one line naming provider and model.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classifyModelError } from "../../src/llm/errors.ts";
import { reply } from "../support/fake-openai.ts";
import { failure, hello, useModelClientServer } from "./model-client-support.ts";

describe("a malformed event stream", () => {
  const { server, clientFor } = useModelClientServer();

  it("fails with one line naming provider and model, after the text already streamed, and is not retried", async () => {
    server.script(reply.malformed(2, "one two three"));
    const { client, sleeps } = clientFor({ fallback_models: ["fake:model-b"] });
    const { events, error } = await failure(client.stream(hello));
    assert.deepEqual(events.map((event) => (event.type === "text" ? event.delta : event.type)), ["one "]);
    assert.equal(error.kind, "provider");
    assert.equal(error.message, "fake:model-a: the server sent a malformed event stream (provider fake, model model-a)");
    assert.equal(error.toString().split("\n").length, 1, "one line");
    assert.equal(error.details?.malformed_stream, true);
    assert.match(String(error.details?.parse_error), /JSON parsing failed/, "the parser's words stay in the details");
    assert.doesNotMatch(String(error.details?.parse_error), /\n/);
    assert.deepEqual(sleeps, []);
    assert.equal(server.requests.length, 1);
  });

  it("moves to the fallback model when the very first event is broken", async () => {
    server.script(reply.malformed(0), reply.text("fallback answer"));
    const { client } = clientFor({ fallback_models: ["fake:model-b"] });
    const events = [];
    for await (const event of client.stream(hello)) events.push(event);
    assert.equal(server.requests.at(-1)!.body.model, "model-b", "a candidate that sent nothing usable falls back");
  });

  it("classifies a model id without a provider too", () => {
    const broken = Object.assign(new Error("JSON parsing failed: Text: {.\nError message: bad"), { name: "AI_JSONParseError", [Symbol.for("vercel.ai.error.AI_JSONParseError")]: true });
    assert.equal(classifyModelError(broken, "solo").message, "solo: the server sent a malformed event stream");
  });
});
