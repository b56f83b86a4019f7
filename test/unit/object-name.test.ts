/** The one way a message names a Kubernetes object (core/model/k8s-object.ts), and that core formats it nowhere else. */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { describeObject, objectName } from "../../core/model/k8s-object";
import { ROOT, tsFiles } from "../support/import-graph";

describe("an object's name in messages (objectName)", () => {
  it('is "Kind namespace/name", and "Kind name" without a namespace (cluster-scoped)', () => {
    expect(objectName({ kind: "Deployment", namespace: "web", name: "front" })).to.equal("Deployment web/front");
    expect(objectName({ kind: "ClusterRole", name: "reader" })).to.equal("ClusterRole reader");
    expect(objectName({ kind: "ClusterRole", namespace: "", name: "reader" })).to.equal("ClusterRole reader");
  });

  it("says what is missing from content that is no valid object", () => {
    expect(objectName({ namespace: "web" })).to.equal("object web/(unnamed)");
  });

  it("reads a manifest's or a live object's metadata the same way", () => {
    expect(describeObject({ kind: "Secret", metadata: { name: "token", namespace: "fleet" } })).to.equal("Secret fleet/token");
    expect(describeObject({ kind: "Namespace", metadata: { name: "fleet" } })).to.equal("Namespace fleet");
  });

  it("core writes an object's kind and namespace into a message only through it", () => {
    // A template that puts `${x.kind} ${x.namespace...` or `${x.kind} ${x.metadata.namespace...` side by side formats the identity by hand.
    const byHand = /\$\{[\w.?]*kind\} \$\{[\w.?]*namespace/;
    expect(byHand.test("`${o.kind} ${o.metadata.namespace}/${o.metadata.name}`")).to.equal(true);
    const found = tsFiles("core").filter((f) => byHand.test(fs.readFileSync(path.join(ROOT, f), "utf8")));
    expect(found).to.deep.equal([]);
  });
});
