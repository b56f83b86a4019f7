/**
 * A shard move and the contents its pairs name (automation/shards/moves.ts contentsLeftBehind): `pulumi
 * state move` moves the pairs, not the BundleContent they name (it cannot copy one that pairs staying
 * behind may name), and the move says so.
 */
import { expect } from "chai";
import { contentsLeftBehind, contentsLeftBehindNote } from "../../automation/shards/moves";

const s = "urn:pulumi:prod.eu::pulumi-fleet::";
const content = (digest: string) => ({
  type: "pulumi-fleet:index:BundleContent",
  urn: `${s}pulumi-fleet:index:Fleet$pulumi-fleet:index:BundleContent::${digest}`,
});
const pair = (name: string, digest?: string) => ({
  type: "pulumi-fleet:index:BundleDeployment",
  urn: `${s}pulumi-fleet:index:Fleet$pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::${name}`,
  inputs: { deploymentId: "d", ...(digest ? { content: digest } : {}) },
});

describe("a shard move's contents (moves.ts contentsLeftBehind)", () => {
  it("names each content the moved pairs name that the destination lacks, once, and not a pair without content (its objects are its own)", () => {
    const moved = [pair("eu-1/apps-a", "aa"), pair("eu-1/apps-b", "bb"), pair("eu-1/apps-c", "aa"), pair("eu-1/secret"), content("aa")];
    expect(contentsLeftBehind(moved, [content("bb")])).to.deep.equal(["aa"]);
    expect(contentsLeftBehind(moved, [content("aa"), content("bb")])).to.deep.equal([]);
  });

  it("says what stays behind and what registers it again, only when something does", () => {
    expect(contentsLeftBehindNote("eu-1", "prod.eu", "prod.us", ["aa"])).to.match(
      /1 content\(s\).*prod\.eu's state.*prod\.us's next `npm run up` registers them/,
    );
    expect(contentsLeftBehindNote("eu-1", "prod.eu", "prod.us", [])).to.equal(undefined);
  });
});
