import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compareVersions, isValidRange, parseVersion, satisfies } from "../../src/plugins/version-range.ts";

/** [range, versions inside it, versions outside it] */
const CASES: [string, string[], string[]][] = [
  ["*", ["0.0.1", "1.0.0", "99.1.2"], ["1.0.0-beta"]],
  ["", ["1.0.0"], []],
  ["x", ["3.4.5"], []],
  ["1.2.3", ["1.2.3", "v1.2.3", "1.2.3+build.7"], ["1.2.4", "1.2.2", "1.2.3-rc.1"]],
  ["=1.2.3", ["1.2.3"], ["1.2.4"]],
  ["1", ["1.0.0", "1.9.9"], ["2.0.0", "0.9.9", "2.0.0-0"]],
  ["1.x", ["1.0.0", "1.99.0"], ["2.0.0"]],
  ["1.2.*", ["1.2.0", "1.2.9"], ["1.3.0", "1.1.9"]],
  ["^1.2.3", ["1.2.3", "1.9.0"], ["1.2.2", "2.0.0", "2.0.0-alpha", "1.5.0-beta"]],
  ["^1", ["1.0.0", "1.5.0"], ["2.0.0", "0.9.0"]],
  ["^0.1.0", ["0.1.0", "0.1.9"], ["0.2.0", "0.0.9", "1.0.0"]],
  ["^0.1", ["0.1.0", "0.1.5"], ["0.2.0"]],
  ["^0.0.3", ["0.0.3"], ["0.0.4", "0.0.2"]],
  ["^0", ["0.0.0", "0.9.9"], ["1.0.0"]],
  ["^1.2.3-beta.2", ["1.2.3-beta.2", "1.2.3-beta.10", "1.2.3", "1.3.0"], ["1.2.3-beta.1", "1.3.0-beta.3", "2.0.0"]],
  ["~1.2.3", ["1.2.3", "1.2.9"], ["1.3.0", "1.2.2"]],
  ["~1.2", ["1.2.0", "1.2.9"], ["1.3.0"]],
  ["~1", ["1.0.0", "1.9.0"], ["2.0.0"]],
  [">=1.2.3 <2", ["1.2.3", "1.99.0"], ["2.0.0", "1.2.2", "2.0.0-rc.1"]],
  [">= 1.2.3 < 2.0.0", ["1.5.0"], ["2.0.0"]],
  [">1.2.3", ["1.2.4"], ["1.2.3"]],
  [">1.2", ["1.3.0"], ["1.2.9", "1.3.0-beta"]],
  [">1", ["2.0.0"], ["1.9.9"]],
  ["<2", ["1.9.9"], ["2.0.0", "2.0.0-beta"]],
  ["<=1.2", ["1.2.9"], ["1.3.0"]],
  ["<=1.2.3", ["1.2.3"], ["1.2.4"]],
  ["1.2.3 - 2.3", ["1.2.3", "2.3.9"], ["2.4.0", "1.2.2"]],
  ["1.2 - 2.3.4", ["1.2.0", "2.3.4"], ["2.3.5"]],
  ["^1.0.0 || ^3.0.0", ["1.4.0", "3.0.0"], ["2.0.0", "4.0.0"]],
  ["1 || >=5 <6", ["1.1.0", "5.5.5"], ["4.0.0", "6.0.0"]],
];

describe("version ranges, as npm writes them in peer dependencies", () => {
  for (const [range, inside, outside] of CASES) {
    it(`'${range}' holds ${inside.join(", ") || "nothing listed"} and not ${outside.join(", ") || "nothing listed"}`, () => {
      for (const version of inside) assert.equal(satisfies(version, range), true, `${version} is in '${range}'`);
      for (const version of outside) assert.equal(satisfies(version, range), false, `${version} is not in '${range}'`);
    });
  }

  it("with includePrerelease, judges a prerelease by its order alone", () => {
    assert.equal(satisfies("0.2.0-beta.1", "*", { includePrerelease: true }), true);
    assert.equal(satisfies("1.5.0-beta", "^1.2.3", { includePrerelease: true }), true);
    assert.equal(satisfies("2.0.0-beta", "^1.2.3", { includePrerelease: true }), false);
    assert.equal(satisfies("1.2.3-rc.1", "^1.2.3", { includePrerelease: true }), false);
  });

  it("answers null for ranges and versions it cannot read, instead of guessing", () => {
    for (const range of ["workspace:*", "github:user/repo", "latest", "1.x.3", "^1.2.3.4", "~>1.2", ">=a"]) {
      assert.equal(isValidRange(range), false, range);
      assert.equal(satisfies("1.0.0", range), null, range);
    }
    assert.equal(satisfies("1.0", "*"), null);
    assert.equal(satisfies("one", "^1"), null);
  });

  it("orders versions by number, a prerelease before its release, numeric identifiers before words", () => {
    const order = ["0.9.0", "1.0.0-0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0", "1.0.1", "1.10.0", "2.0.0"];
    for (let i = 1; i < order.length; i++) {
      assert.ok(compareVersions(parseVersion(order[i - 1]!)!, parseVersion(order[i]!)!) < 0, `${order[i - 1]} < ${order[i]}`);
      assert.ok(compareVersions(parseVersion(order[i]!)!, parseVersion(order[i - 1]!)!) > 0, `${order[i]} > ${order[i - 1]}`);
    }
    assert.equal(compareVersions(parseVersion("1.2.3+a")!, parseVersion("1.2.3+b")!), 0);
    assert.equal(parseVersion("01.2.3"), null);
  });
});
