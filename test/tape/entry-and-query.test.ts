// Entry constructors and decoding, dates, and the immutable query builder.
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { BubError } from "../../src/kernel/errors.ts";
import { archiveStamp, dateFromEpochSeconds, formatUtcDate, parseIsoDate, utcNow } from "../../src/tape/date.ts";
import { cloneEntry, decodeEntry, encodeEntry, encodeEntryBody, entries, parseEntryLine, prepareEntry } from "../../src/tape/entry.ts";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { pythonJson, pythonRepr, withThousands } from "../../src/tape/python-format.ts";
import { tapeQuery } from "../../src/tape/query.ts";
import { forgetSecrets, redactJsonText, rememberSecrets } from "../../src/config/redaction.ts";
import { bubError } from "./support/helpers.ts";

describe("entries", () => {
  it("builds the reference payloads for every kind", () => {
    const shapes = [
      entries.message({ role: "user", content: "hi" }, { run_id: "r" }),
      entries.system("be brief"),
      entries.anchor("session/start", { owner: "human" }),
      entries.anchor("bare"),
      entries.toolCall([{ id: "c1", type: "function", function: { name: "fs_read", arguments: "{}" } }]),
      entries.toolResult(["ok", { n: 1 }]),
      entries.error(new BubError("tool", "boom", { details: { code: 2 } })),
      entries.error({ kind: "provider", message: "down" }),
      entries.event("run", { status: "ok" }),
      entries.event("bare"),
    ].map(({ kind, payload, meta }) => ({ kind, payload, meta }));
    assert.deepEqual(shapes, [
      { kind: "message", payload: { role: "user", content: "hi" }, meta: { run_id: "r" } },
      { kind: "system", payload: { content: "be brief" }, meta: {} },
      { kind: "anchor", payload: { name: "session/start", state: { owner: "human" } }, meta: {} },
      { kind: "anchor", payload: { name: "bare" }, meta: {} },
      { kind: "tool_call", payload: { calls: [{ id: "c1", type: "function", function: { name: "fs_read", arguments: "{}" } }] }, meta: {} },
      { kind: "tool_result", payload: { results: ["ok", { n: 1 }] }, meta: {} },
      { kind: "error", payload: { kind: "tool", message: "boom", details: { code: 2 } }, meta: {} },
      { kind: "error", payload: { kind: "provider", message: "down" }, meta: {} },
      { kind: "event", payload: { name: "run", data: { status: "ok" } }, meta: {} },
      { kind: "event", payload: { name: "bare" }, meta: {} },
    ]);
  });

  it("copies what it is given", () => {
    const message = { role: "user", content: "hi" };
    const entry = entries.message(message);
    message.content = "changed";
    assert.equal(entry.payload.content, "hi");
  });

  it("encodes the reference line format, with or without the id known", () => {
    const prepared = prepareEntry({ kind: "event", payload: { name: "x", text: "ü" }, meta: {}, date: "2026-01-01T00:00:00.000000+00:00" });
    const line = encodeEntry(7, prepared);
    assert.equal(line, '{"id":7,"kind":"event","payload":{"name":"x","text":"ü"},"meta":{},"date":"2026-01-01T00:00:00.000000+00:00"}');
    const body = encodeEntryBody(prepared);
    assert.equal(`{"id":7,${body.body}`, line);
    assert.equal(body.bodyBytes, Buffer.byteLength(body.body));
  });

  it("encodes each part once to exactly the whole entry's JSON, secrets redacted, and reads back as that JSON parses", () => {
    rememberSecrets([{ name: "api_key", value: "sk-\"quoted\"-0123456789" }]);
    try {
      const payload = JSON.parse('{"__proto__":{"x":1},"text":"tab\\t ü \\u2028 sk-\\"quoted\\"-0123456789","n":[1,-0,1e21,null,true],"2":"two","a":{"b":[{}]}}');
      const cases = [
        { kind: "event", payload, meta: { run_id: "r", note: 'sk-"quoted"-0123456789' }, date: "2026-01-01T00:00:00.000000+00:00" },
        { kind: 'sk-"quoted"-0123456789', payload: {}, meta: {}, date: 'sk-"quoted"-0123456789' },
      ];
      for (const entry of cases) {
        const prepared = prepareEntry(entry);
        const whole = redactJsonText(JSON.stringify({ id: 3, kind: prepared.kind, payload: prepared.payload, meta: prepared.meta, date: prepared.date }));
        const encoded = encodeEntryBody(prepared);
        assert.equal(`{"id":3,${encoded.body}`, whole);
        assert.equal(encodeEntry(3, prepared), whole);
        assert.ok(!whole.includes("quoted\\\"-0123") && whole.includes("[redacted:api_key]"));
        const { id: _id, ...parsed } = JSON.parse(whole);
        assert.deepEqual(encoded.value, parsed);
        assert.equal(encoded.payloadJson, JSON.stringify(parsed.payload));
        assert.equal(encoded.metaJson, JSON.stringify(parsed.meta));
      }
    } finally {
      forgetSecrets();
    }
  });

  it("counts the body's UTF-8 bytes exactly, redacted parts and characters beyond the BMP included", () => {
    rememberSecrets([{ name: "api_key", value: "sk-ü-0123456789" }]);
    try {
      for (const entry of [
        { kind: "message", payload: { content: "😀 naïve \u2028 sk-ü-0123456789" }, meta: { note: "ü" }, date: "2026-01-01T00:00:00.000000+00:00" },
        { kind: "sk-ü-0123456789", payload: {}, meta: {}, date: "sk-ü-0123456789" },
      ]) {
        const encoded = encodeEntryBody(prepareEntry(entry));
        assert.equal(encoded.bodyBytes, Buffer.byteLength(encoded.body, "utf8"));
      }
    } finally {
      forgetSecrets();
    }
  });

  it("refuses an entry whose payload does not write as a JSON object", () => {
    const date = "2026-01-01T00:00:00.000000+00:00";
    assert.throws(() => encodeEntryBody(prepareEntry({ kind: "event", payload: { n: 1n }, meta: {}, date })), bubError("invalid_input", /tape entry/));
    assert.throws(() => encodeEntryBody(prepareEntry({ kind: "event", payload: { toJSON: () => "text" }, meta: {}, date })), bubError("invalid_input", /tape entry/));
    assert.throws(() => encodeEntryBody(prepareEntry({ kind: "event", payload: { toJSON: () => undefined }, meta: {}, date })), bubError("invalid_input", /tape entry/));
  });

  it("decodes entries like the reference reader", () => {
    const base = { id: 1, kind: "event", payload: { name: "x" } };
    assert.deepEqual(decodeEntry({ ...base, meta: "nope", date: "d" }), { ...base, meta: {}, date: "d" });
    assert.equal((decodeEntry({ ...base, timestamp: 0 }) as { date: string }).date, "1970-01-01T00:00:00.000000+00:00");
    assert.equal((decodeEntry({ ...base }) as { date: string }).date, "1970-01-01T00:00:00.000000+00:00");
    assert.equal(decodeEntry({ ...base, id: 1.5 }), "id is not an integer");
    assert.equal(decodeEntry({ ...base, kind: null }), "kind is not a string");
    assert.equal(decodeEntry({ ...base, payload: "x" }), "payload is not an object");
    assert.equal(decodeEntry({ ...base, date: { when: 1 } }), "date is not a string");
    assert.equal(parseEntryLine("{oops"), "not valid JSON");
    assert.equal(parseEntryLine("42"), "not a JSON object");
  });
});

describe("dates", () => {
  it("formats UTC with microseconds and +00:00", () => {
    assert.equal(formatUtcDate(Date.UTC(2026, 0, 2, 3, 4, 5, 123) * 1000 + 456), "2026-01-02T03:04:05.123456+00:00");
    assert.match(utcNow(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
    assert.equal(dateFromEpochSeconds(1.25), "1970-01-01T00:00:01.250000+00:00");
    assert.equal(archiveStamp(new Date(Date.UTC(2026, 10, 22, 9, 8, 7))), "20261122T090807Z");
  });

  it("stamps dates from the wall clock that never go backwards", () => {
    const before = Date.now();
    const stamps = Array.from({ length: 5000 }, () => utcNow());
    const after = Date.now();
    for (let index = 1; index < stamps.length; index++) {
      assert.ok(stamps[index - 1]! <= stamps[index]!, `${stamps[index - 1]} then ${stamps[index]}`);
    }
    const first = Math.floor(parseIsoDate(stamps[0]!)! / 1000);
    const last = Math.floor(parseIsoDate(stamps.at(-1)!)! / 1000);
    assert.ok(first >= before - 1 && last <= after + 1, `${stamps[0]}..${stamps.at(-1)} outside ${before}..${after}`);
  });

  it("keeps the last date when the system clock is set back", () => {
    const latest = utcNow();
    const now = Date.now();
    const clock = mock.method(Date, "now", () => now - 3_600_000);
    try {
      assert.ok(utcNow() >= latest);
      clock.mock.mockImplementation(() => now + 60_000);
      assert.equal(utcNow(), formatUtcDate((now + 60_000) * 1000));
    } finally {
      clock.mock.restore();
    }
  });

  it("parses ISO dates and datetimes like Python's fromisoformat", () => {
    const micros = (text: string, bound?: "start" | "end") => parseIsoDate(text, bound);
    const day = Date.UTC(2026, 1, 28) * 1000;
    assert.equal(micros("2026-02-28"), day);
    assert.equal(micros("20260228"), day);
    assert.equal(micros("2026-02-28", "end"), day + 86_400_000_000 - 1);
    assert.equal(micros("2026-02-28T01:02:03.5"), day + 3_723_500_000);
    assert.equal(micros("2026-02-28 01:02"), day + 3_720_000_000);
    assert.equal(micros("2026-02-28T01:00:00+01:00"), day);
    assert.equal(micros("2026-02-28T00:00:00Z"), day);
    assert.equal(micros("2026-02-28T00:00:00.1234567-00:30"), day + 123_456 + 1_800_000_000);
    for (const bad of ["2026-02-29", "2024-13-01", "2026-02-28T24:00", "yesterday", "", "2026-02-28T00:00+25:00", "0000-01-01"]) {
      assert.equal(micros(bad), null, bad);
    }
    assert.equal(micros("2024-02-29"), Date.UTC(2024, 1, 29) * 1000);
  });
});

describe("python-compatible text", () => {
  it("dumps JSON with Python's separators and keeps non-ASCII", () => {
    assert.equal(pythonJson({ b: 1, a: ["ü", null, true] }), '{"b": 1, "a": ["ü", null, true]}');
    assert.equal(pythonJson({ b: 1, a: { d: 2, c: 3 } }, { sortKeys: true }), '{"a": {"c": 3, "d": 2}, "b": 1}');
    assert.equal(pythonJson(undefined), "null");
  });

  it("writes string reprs and thousands like Python", () => {
    assert.equal(pythonRepr("abc"), "'abc'");
    assert.equal(pythonRepr("it's"), '"it\'s"');
    assert.equal(pythonRepr("a'b\"c\n"), "'a\\'b\"c\\n'");
    assert.equal(withThousands(1234567), "1,234,567");
    assert.equal(withThousands(999), "999");
  });
});

describe("tapeQuery", () => {
  it("builds plain, frozen query objects without changing earlier builders", () => {
    const base = tapeQuery("t__t");
    const recent = base.lastAnchor().kinds("message").limit(5);
    assert.deepEqual(base.build(), { tape: "t__t" });
    assert.deepEqual(recent.build(), { tape: "t__t", lastAnchor: true, kinds: ["message"], limit: 5 });
    assert.ok(Object.isFrozen(recent.build()));
    assert.equal(recent.tape, "t__t");
  });

  it("switches between last-anchor and named-anchor slicing like the reference", () => {
    assert.deepEqual(tapeQuery("t").lastAnchor().afterAnchor("a").build(), { tape: "t", afterAnchor: "a" });
    assert.deepEqual(tapeQuery("t").afterAnchor("a").lastAnchor().build(), { tape: "t", lastAnchor: true });
    assert.deepEqual(tapeQuery("t").afterAnchor("a").afterAnchor("").build(), { tape: "t" });
    assert.deepEqual(tapeQuery("t").betweenAnchors("a", "b").text("x").build(), { tape: "t", betweenAnchors: { start: "a", end: "b" }, text: "x" });
  });

  it("accepts Date bounds and a single bound", () => {
    const query = tapeQuery("t").betweenDates(new Date(Date.UTC(2026, 0, 1)), null).build();
    assert.deepEqual(query.betweenDates, { start: "2026-01-01T00:00:00.000Z", end: undefined });
    assert.deepEqual(tapeQuery({ tape: "t", limit: 3 }).text("x").build(), { tape: "t", limit: 3, text: "x" });
  });
});

describe("cloneEntry", () => {
  it("copies deeply, so changing the copy leaves the original alone", () => {
    const original: TapeEntry = { id: 1, kind: "message", date: "2026-01-01T00:00:00Z", meta: { run_id: "r" }, payload: { role: "user", content: [{ type: "text", text: "hi" }], n: 1, none: null } };
    const copy = cloneEntry(original);
    assert.deepEqual(copy, original);
    (copy.payload.content as { text: string }[])[0]!.text = "changed";
    copy.meta.run_id = "other";
    assert.equal((original.payload.content as { text: string }[])[0]!.text, "hi");
    assert.equal(original.meta.run_id, "r");
  });

  it("keeps a __proto__ key as a key", () => {
    const original = JSON.parse('{"id":2,"kind":"event","date":"2026-01-01T00:00:00Z","meta":{},"payload":{"__proto__":{"polluted":true}}}') as TapeEntry;
    const copy = cloneEntry(original);
    assert.equal(Object.getPrototypeOf(copy.payload), Object.prototype);
    assert.deepEqual(Object.keys(copy.payload), ["__proto__"]);
    assert.equal((copy.payload as Record<string, unknown>).polluted, undefined);
  });
});
