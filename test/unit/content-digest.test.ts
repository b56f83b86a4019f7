/**
 * A render's digest is one rule in both languages: test/fixtures/content-digest.json holds this side's
 * canonical JSON and digests, which tools/fleet-provider content_test.go computes the same from the
 * manifests' JSON text. A pair in the content form reads back whole with its content, and as its
 * objects' identities without it.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { canonicalJson, contentDigest, objectDigest } from "../../core/model/content-digest";
import { contentForm, fromEngineObjects, pairObjects, withOwnerLabels } from "../../core/model/pair";

const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, "../fixtures/content-digest.json"), "utf8")) as {
  objects: { key: string; manifest: string; canonical: string; digest: string }[];
  content: string;
};

describe("content digest", () => {
  it("is the fixture's, which Go computes the same", () => {
    for (const o of fixture.objects) {
      const manifest = JSON.parse(o.manifest);
      expect(canonicalJson(manifest), o.key).to.equal(o.canonical);
      expect(objectDigest(manifest), o.key).to.equal(o.digest);
    }
    expect(contentDigest(Object.fromEntries(fixture.objects.map((o) => [o.key, o.digest])))).to.equal(fixture.content);
  });

  it("sorts integer-like keys as text, as Go does, not first as JavaScript's objects list them", () => {
    expect(canonicalJson({ "9": 1, "10": 2, a: { b: [null, true] } })).to.equal('{"10":2,"9":1,"a":{"b":[null,true]}}');
  });

  it("does not depend on the order of keys", () => {
    expect(objectDigest({ a: 1, b: { c: 2, d: 3 } })).to.equal(objectDigest({ b: { d: 3, c: 2 }, a: 1 }));
    expect(objectDigest({ a: 1 })).not.to.equal(objectDigest({ a: 2 }));
  });
});

describe("content form", () => {
  const owner = (cluster: string) => ({ "fleet.cattle.io/bundle-name": "b", "fleet.cattle.io/cluster": cluster });
  const objectsOn = (cluster: string) =>
    pairObjects([
      {
        key: "/ConfigMap/app/a",
        manifest: {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "a", namespace: "app", labels: { team: "x", ...owner(cluster) } },
          data: { k: "v" },
        },
        retain: "kept",
      },
      {
        key: "apps/Deployment/app/d",
        manifest: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "app", labels: owner(cluster) } },
        ignoreDrift: ["/spec/replicas"],
      },
    ]);
  const objects = objectsOn("c1");

  it("keeps the manifests apart, each object's identity, digest, retain and ignoreDrift in the pair", () => {
    const form = contentForm(objects, owner("c1"))!;
    expect(form.objects["/ConfigMap/app/a"]).to.deep.equal({ apiVersion: "v1", digest: objectDigest(objects["/ConfigMap/app/a"].manifest), retain: "kept" });
    expect(form.objects["apps/Deployment/app/d"]).to.include({ apiVersion: "apps/v1" }).and.not.have.property("manifest");
    expect(form.content).to.equal(contentDigest(Object.fromEntries(Object.entries(form.manifests).map(([k, m]) => [k, objectDigest(JSON.parse(m))]))));
    expect(contentForm(structuredClone(objects), owner("c1"))!.content, "the same render, the same digest").to.equal(form.content);
  });

  it("is one content for every cluster that renders a bundle alike: the owner labels, which name the cluster, are the pair's", () => {
    const [c1, c2] = [contentForm(objects, owner("c1"))!, contentForm(objectsOn("c2"), owner("c2"))!];
    expect(c2.content).to.equal(c1.content);
    expect(c2.manifests).to.deep.equal(c1.manifests);
    expect(JSON.parse(c1.manifests["/ConfigMap/app/a"]).metadata.labels).to.deep.equal({ team: "x" });
    expect(c2.objects["/ConfigMap/app/a"].digest, "each pair's digest is of what it applies").to.not.equal(c1.objects["/ConfigMap/app/a"].digest);
    expect(objectDigest(withOwnerLabels(JSON.parse(c1.manifests["/ConfigMap/app/a"]), owner("c2")))).to.equal(c2.objects["/ConfigMap/app/a"].digest);
    expect(contentForm(objects, owner("c2")), "an object without the pair's owner labels: no content form").to.equal(undefined);
  });

  it("reads back whole with its content, as identities without", () => {
    const form = contentForm(objects, owner("c1"))!;
    expect(fromEngineObjects(form.objects, form.manifests, owner("c1"))).to.deep.equal(objects);
    expect(fromEngineObjects(form.objects)["apps/Deployment/app/d"]).to.deep.equal({
      manifest: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "app" } },
      ignoreDrift: ["/spec/replicas"],
    });
  });
});
