import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChannelManager } from "../../src/channels/manager.ts";
import { selectChannels } from "../../src/channels/selection.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import { RecordingChannel, testFramework } from "./support.ts";

describe("ChannelManager channel selection", () => {
  const channels = [
    new RecordingChannel("telegram"),
    new RecordingChannel("cli", { kind: "interface" }),
    new RecordingChannel("cron", { kind: "lifecycle" }),
    new RecordingChannel("off", { enabled: false }),
    new RecordingChannel("discord"),
  ];
  const names = (enabledChannels: string[] | null, env: NodeJS.ProcessEnv = {}) =>
    new ChannelManager(testFramework([], env), { channels, enabledChannels }).enabledChannels().map((channel) => channel.name);

  it("runs every enabled non-interface channel for 'all'", () => {
    assert.deepEqual(names(["all"]), ["telegram", "cron", "discord"]);
  });

  it("excludes channels named with '!'", () => {
    assert.deepEqual(names(["all", "!telegram", " !cron "]), ["discord"]);
  });

  it("adds lifecycle channels to a named selection of ordinary channels", () => {
    assert.deepEqual(names(["cli"]), ["cli", "cron"]);
    assert.deepEqual(names(["discord", "!cron"]), ["discord"]);
  });

  it("runs only lifecycle channels when only they are named, and never a disabled one", () => {
    assert.deepEqual(names(["cron"]), ["cron"]);
    assert.deepEqual(names(["off"]), []);
  });

  it("reads the enabled_channels setting when no list is given", async () => {
    const bub = testFramework([], { BUB_ENABLED_CHANNELS: "discord,!cron" });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.deepEqual(new ChannelManager(bub, { channels }).enabledChannels().map((channel) => channel.name), ["discord"]);
  });
});

describe("selectChannels", () => {
  const channels = [new RecordingChannel("a"), new RecordingChannel("tick", { kind: "lifecycle" }), new RecordingChannel("b"), new RecordingChannel("repl", { kind: "interface" })];
  const names = (selection: string[]) => selectChannels(channels, selection).map((channel) => channel.name);

  it("keeps the order of the channels, not of the names, and adds lifecycle channels last", () => {
    assert.deepEqual(names(["b", "a"]), ["a", "b", "tick"]);
    assert.deepEqual(names(["b", "tick"]), ["tick", "b"]);
  });

  it("ignores blank names and unknown ones", () => {
    assert.deepEqual(names(["", "  ", "nope"]), []);
    assert.deepEqual(names([" a ", ""]), ["a", "tick"]);
  });

  it("runs an interface channel only when it is named, with the lifecycle channels", () => {
    assert.deepEqual(names(["all"]), ["a", "tick", "b"]);
    assert.deepEqual(names(["repl"]), ["repl", "tick"]);
    assert.deepEqual(names(["repl", "!tick"]), ["repl"]);
  });

  it("lets an exclusion win over an inclusion of the same name", () => {
    assert.deepEqual(names(["a", "!a"]), []);
    assert.deepEqual(names(["all", "!b", "!repl"]), ["a", "tick"]);
  });
});
