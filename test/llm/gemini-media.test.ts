import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { geminiMediaBody, isGeminiProvider } from "../../src/llm/gemini-media.ts";
import { createModelClient } from "../../src/llm/model-client.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";
import type { ChatMessage } from "../../src/kernel/tape-contract.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";

const VIDEO = "data:video/mp4;base64,AAAAGGZ0eXA=";
const OGG = Buffer.from("OggS-voice").toString("base64");
const MP3 = Buffer.from("ID3-song").toString("base64");
const IMAGE = "data:image/png;base64,iVBORw0KGgo=";

const MESSAGES: ChatMessage[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "what is in these?" },
      { type: "image_url", image_url: { url: IMAGE } },
      { type: "video_url", video_url: { url: VIDEO } },
      { type: "input_audio", input_audio: { data: OGG, format: "ogg" } },
      { type: "input_audio", input_audio: { data: MP3, format: "mp3" } },
    ],
  },
];

describe("media parts for Gemini", () => {
  let server: FakeOpenAI;
  before(async () => {
    server = await startFakeOpenAI();
  });
  after(() => server.close());

  async function sentContent(provider: string, messages: ChatMessage[]): Promise<unknown> {
    server.script(reply.text("ok"));
    const model = `${provider}:some-model`;
    const client = createModelClient(defaultModelSettings({ model, api_key: "k", api_base: server.url }));
    for await (const _event of client.stream({ model, messages })) {
      // drained
    }
    await client.close();
    return server.requests.at(-1)!.body.messages.at(-1)!.content;
  }

  it("names the Gemini providers", () => {
    assert.ok(isGeminiProvider("gemini") && isGeminiProvider("vertex_ai"));
    assert.ok(!isGeminiProvider("openai") && !isGeminiProvider("local"));
  });

  it("sends video and audio (any format) to Gemini as file parts with data URLs; images and text unchanged", async () => {
    assert.deepEqual(await sentContent("gemini", MESSAGES), [
      { type: "text", text: "what is in these?" },
      { type: "image_url", image_url: { url: IMAGE } },
      { type: "file", file: { file_data: VIDEO } },
      { type: "file", file: { file_data: `data:audio/ogg;base64,${OGG}` } },
      { type: "file", file: { file_data: `data:audio/mpeg;base64,${MP3}` } },
    ]);
  });

  it("leaves other providers' media parts as they were", async () => {
    const parts = MESSAGES[0]!.content as { type: string; input_audio?: { format: string } }[];
    const withoutOgg: ChatMessage[] = [{ role: "user", content: parts.filter((part) => part.input_audio?.format !== "ogg") }];
    const content = (await sentContent("local", withoutOgg)) as { type: string }[];
    assert.deepEqual(
      content.map((part) => part.type),
      ["text", "image_url", "video_url", "input_audio"],
    );
  });

  it("rewrites only video_url and input_audio parts of a body", () => {
    const body = { model: "m", messages: [{ role: "user", content: "plain" }, { role: "user", content: [{ type: "input_audio", input_audio: { data: "AA==", format: "wav" } }] }] };
    assert.deepEqual(geminiMediaBody(body).messages, [
      { role: "user", content: "plain" },
      { role: "user", content: [{ type: "file", file: { file_data: "data:audio/wav;base64,AA==" } }] },
    ]);
  });
});
