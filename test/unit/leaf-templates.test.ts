/**
 * The helm values fast path must give exactly what Fleet's way gives (render the whole values text as
 * one template, parse the result as YAML 1.1), for every value shape and cluster, or step aside.
 */
import { expect } from "chai";
import * as YAML from "yaml";
import { compileTemplate } from "../../core/targeting/gotemplate";
import { compileLeafTemplates } from "../../core/targeting/leaf-templates";

const OPTS = { version: "1.1" as const };

function fullPath(values: Record<string, unknown>, data: unknown): unknown {
  const text = YAML.stringify(values, { ...OPTS, sortMapEntries: true, lineWidth: 0 });
  return YAML.parse(compileTemplate(text).render(data), OPTS) ?? {};
}

const clusters = ["c-1", "prod-eu-2", "3", "yes", "on", "NULL", "a: b", "x #y", "", " pad", "-dash", "quote\"d", "back\\slash", "it's", "1.5", "0x1F", "1e3", "~", "multi word", "a{b}"]
  .map((name, i) => ({ ClusterName: name, ClusterLabels: { env: i % 2 ? "prod" : "dev", n: String(i) }, ClusterValues: { replicas: i, flag: i % 2 === 0 } }));

const shapes: Record<string, Record<string, unknown>> = {
  plain: { cluster: "${ .ClusterName }", fixed: "x", n: 1 },
  prefixed: { host: "app-${ .ClusterName }.example.com", env: "${ .ClusterLabels.env }" },
  numbers: { replicas: "${ .ClusterValues.replicas }", flag: "${ .ClusterValues.flag }" },
  nested: { a: { b: ["${ .ClusterName }", { c: "${ .ClusterLabels.n }" }] } },
  quotedContext: { q: "a: ${ .ClusterName }", h: "#${ .ClusterName }" },
  conditional: { tier: "${ if eq .ClusterLabels.env \"prod\" }gold${ else }bronze${ end }" },
  quotedAction: { q: "say: ${ if eq .ClusterLabels.env \"prod\" }hi${ end }" },
  spanning: { a: "${ if eq .ClusterLabels.env \"prod\" }", b: "${ end }" },
  trim: { a: "x ${- .ClusterName }" },
  templatedKey: { "${ .ClusterName }": "v" },
};

describe("helm values fast path (leaf templates)", () => {
  for (const [shape, values] of Object.entries(shapes)) {
    it(`${shape}: the same values as the full path for every cluster, or the full path is taken`, () => {
      const leaves = compileLeafTemplates(values, OPTS);
      let fast = 0;
      for (const data of clusters) {
        let expected: unknown;
        try {
          expected = fullPath(values, data);
        } catch {
          continue; // the full path itself fails (invalid YAML after rendering): the caller reports it
        }
        const got = leaves?.render(values, data);
        if (got === undefined) continue;
        fast++;
        expect(got, `${shape} / ${JSON.stringify(data.ClusterName)}`).to.deep.equal(expected);
      }
      if (["plain", "prefixed", "numbers", "nested", "conditional"].includes(shape)) expect(fast, "most clusters take the fast path").to.be.greaterThan(clusters.length / 2);
    });
  }

  it("steps aside for actions spanning values, trim markers and templated keys", () => {
    expect(compileLeafTemplates(shapes.spanning, OPTS)).to.equal(undefined);
    expect(compileLeafTemplates(shapes.trim, OPTS)).to.equal(undefined);
    expect(compileLeafTemplates(shapes.templatedKey, OPTS)).to.equal(undefined);
  });

  it("hands back to the full path when a rendered value would not stay one plain scalar", () => {
    const leaves = compileLeafTemplates(shapes.plain, OPTS)!;
    expect(leaves.render(shapes.plain, clusters[6])).to.equal(undefined); // "a: b" becomes a mapping
    expect(leaves.render(shapes.plain, clusters[0])).to.deep.equal({ cluster: "c-1", fixed: "x", n: 1 });
    expect(leaves.render(shapes.plain, clusters[3])).to.deep.equal({ cluster: true, fixed: "x", n: 1 }); // YAML 1.1: yes
  });
});
