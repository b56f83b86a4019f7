import { expect } from "chai";
import { bundleNameFor, helmReleaseNameOf, limit, safeConcatName } from "../../core/base/naming";

describe("Fleet naming", () => {
  // The expected values are Fleet's own test vectors (rancher/fleet internal/names/name_test.go).
  const str50 = "12345678901234567890123456789012345678901234567890";
  const str53 = str50 + "123";
  const str63 = str50 + "1234567890" + "123";
  const vectors: [string, string][] = [
    [str53, str53],
    [str53 + "a", "12345678901234567890123456789012345678901234567-fdba4"],
    [str63 + "a", "12345678901234567890123456789012345678901234567-eb12d"],
    ["long-name-test-shortpath-with@char", "long-name-test-shortpath-with-char-031bab5e"],
    ["long-name-test-shortpath-with+char", "long-name-test-shortpath-with-char-21c88393"],
    ["long-name-test-0.App_ ", "long-name-test-0-app-5bf6b3fb"],
    ["long-name-test--App_-_12.factor", "long-name-test-app-12-factor-0efbac37"],
    ["bundle.name.example.com", "bundle-name-example-com-645ef821"],
    [str53.slice(0, 46) + "-1234567", "1234567890123456789012345678901234567890123456-d0bce"],
  ];
  for (const [input, want] of vectors) {
    it(`HelmReleaseName(${JSON.stringify(input)}) = ${want}`, () => expect(helmReleaseNameOf(input)).to.equal(want));
  }

  it("Limit matches Fleet's vectors", () => {
    expect(limit("1234567", 8)).to.equal("1234567");
    expect(limit("12345678", 8)).to.equal("12345678");
    expect(limit("12345678", 7)).to.equal("1-25d55");
    expect(limit("123456789", 8)).to.equal("12-25f9e");
    expect(limit("1-3456789", 8)).to.equal("1-9b657");
  });

  it("reproduces the fleet.yaml dependsOn documentation example", () => {
    expect(helmReleaseNameOf("opni-fleet-examples-fleets-opni-ui-plugin-operator-crd")).to.equal("opni-fleet-examples-fleets-opni-ui-plugin-opera-021f7");
  });

  it("joins GitRepo name and path like filepath.Join", () => {
    expect(bundleNameFor("repo", ".")).to.equal("repo");
    expect(bundleNameFor("repo", "apps/web")).to.equal("repo-apps-web");
    expect(bundleNameFor("repo", "./apps/")).to.equal("repo-apps");
  });

  it("adds a hash when case or characters had to change, so distinct paths stay distinct", () => {
    const a = bundleNameFor("repo", "Apps");
    const b = bundleNameFor("repo", "apps");
    expect(a).to.match(/^repo-apps-[0-9a-f]{8}$/);
    expect(b).to.equal("repo-apps");
  });

  it("falls back to a checksum when nothing valid is left", () => {
    expect(helmReleaseNameOf("")).to.match(/^[0-9a-f]{24}$/);
    expect(helmReleaseNameOf("___")).to.match(/^[0-9a-f]{8}$/); // "___-<hash>" cleans down to the hash
  });

  it("limits without a double separator", () => {
    expect(limit("a".repeat(46) + "-bbbbbbbbbb", 53)).to.match(/^a{46}-[0-9a-f]{5}$/);
    expect(limit("short", 53)).to.equal("short");
  });

  it("SafeConcatName keeps names under 64 characters", () => {
    expect(safeConcatName("fleet-agent", "c1")).to.equal("fleet-agent-c1");
    const long = safeConcatName("x".repeat(40), "y".repeat(40));
    expect(long.length).to.equal(63);
  });
});
