/**
 * Helm values templating as Fleet does it, through fleet-render (Go's text/template + sprig, as
 * Fleet's tplFuncMap configures them, and sigs.k8s.io/yaml): each case is a values entry for one
 * cluster and Fleet's result, or the error Fleet gives. The expectations are Go's behaviour, the cases
 * the ones where a hand-written copy went wrong (number formatting, type errors, YAML re-typing).
 */
import { expect } from "chai";
import { templateHelmValues } from "../../core/targeting/values";
import { ClusterConfig } from "../../core/config/stack";

const cluster: ClusterConfig = {
  name: "eu-1", labels: { env: "prod", region: "eu", "management.cattle.io/x": "m", "cattle.io/hidden": "h" },
  annotations: { owner: "ops" }, templateValues: { replicas: 3, ratio: 0.5, big: 12345678901, list: ["a", "b"], flag: true },
  deleteUnreachable: false,
};

type Case = [template: string, expected: unknown] | [template: string, error: RegExp];

const CASES: Case[] = [
  // numbers: Go's formatting, integer arithmetic on sprig's int64 conversions
  ['${ printf "%.2f" 3.14159 }', 3.14],
  ["${ mul 3.14159 2 }", 6],
  ["${ mulf 3.14159 2 }", 6.28318],
  ["${ div 7 2 }", 3],
  ["${ mod 7 3 }", 1],
  ['${ printf "%X" 255 }', "FF"],
  ['${ printf "%05d" 42 }', 34], // "00042" read back as YAML 1.1: octal 042
  ["${ round 2.567 2 }", 2.57],
  ["${ .ClusterValues.replicas }", 3],
  ["${ .ClusterValues.big }", 12345678901],
  ["${ 12345678901234567890 }", /overflows int/],
  ["${ add1 .ClusterValues.replicas }", 4],
  ["${ max 3 9 2 }", 9],
  // comparisons and type errors
  ['${ eq 1 "1" }', /incompatible types for comparison/],
  ["${ len 5 }", /len of type int/],
  ["${ eq .ClusterLabels.env \"prod\" }", true],
  ["${ and true false }", false],
  ["${ or .ClusterLabels.missing \"dflt\" }", /map has no entry for key "missing"/],
  ['${ or (get .ClusterLabels "missing") "dflt" }', "dflt"],
  // YAML re-typing of the rendered text (sigs.k8s.io/yaml: YAML 1.1 scalars)
  ['${ "yes" }', true],
  ['${ "00005" }', 5],
  ['${ "1e21" }', 1e21],
  ['${ "null" }', null],
  ['${ "~" }', null],
  ['${ "0x1F" }', 31],
  ['${ "on" }', true],
  ['${ quote "yes" }', "yes"],
  // strings, lists, dicts, regex, semver
  ['${ regexReplaceAll "[0-9]+" "abc123def" "#" }', "abc#def"],
  ['${ .ClusterName | upper | replace "-" "_" }', "EU_1"],
  ['${ list 3 1 2 | sortAlpha | join "," }', "1,2,3"],
  ['${ until 3 | toJson }', [0, 1, 2]],
  ['${ seq 1 3 }', "1 2 3"],
  ['${ semverCompare ">=1.2.0" "1.10.0" }', true],
  ['${ dict "a" 1 | toJson }', { a: 1 }],
  ["${ .ClusterValues.list | toJson }", ["a", "b"]],
  ['${ trunc 3 "abcdef" }', "abc"],
  ['${ b64enc "hi" }', "aGk="],
  ['${ sha256sum "x" | trunc 8 }', "2d711642"],
  ["${ .ClusterAnnotations.owner }", "ops"],
  ["${ .ClusterNamespace }", "fleet-default"],
  // labels: cattle.io keys are hidden from templates except management/fleet ones (wrangler's cleaning)
  ['${ index .ClusterLabels "management.cattle.io/x" }', "m"],
  ['${ hasKey .ClusterLabels "cattle.io/hidden" }', false],
  // functions Fleet removes, and the non-deterministic ones refused here
  ['${ env "HOME" }', /function "env" not defined/],
  ['${ tpl "x" . }', /function "tpl" not defined/],
  ['${ include "x" . }', /function "include" not defined/],
  ['${ getHostByName "localhost" }', /function "getHostByName" not defined/],
  ["${ toYaml .ClusterLabels }", /function "toYaml" not defined/],
  ["${ now }", /"now" is not deterministic/],
  ["${ randAlphaNum 5 }", /"randAlphaNum" is not deterministic/],
  ["${ uuidv4 }", /"uuidv4" is not deterministic/],
  // control flow: short-circuit evaluation (Go 1.18+ and/or)
  ['${ if and false (fail "not evaluated") }x${ else }y${ end }', true], // "y" is a YAML 1.1 boolean
  ['${ if and false (fail "not evaluated") }x${ else }z${ end }', "z"],
  ['${ fail "stop here" }', /stop here/],
];

describe("helm values templating is Fleet's (Go text/template + sprig via fleet-render)", () => {
  it(`${CASES.length} cases`, () => {
    const jobs = CASES.map(([tpl]) => ({ helm: { values: { v: tpl } }, cluster, ctx: { gitRepo: "r", bundle: "b" } }));
    // One call per case: a batch stops at its first failing job, and each error is checked here.
    for (const [i, c] of CASES.entries()) {
      const [tpl, want] = c;
      let got: unknown;
      let error: string | undefined;
      try {
        got = templateHelmValues([jobs[i]])[0].values!.v;
      } catch (err) {
        error = (err as Error).message;
      }
      if (want instanceof RegExp) {
        expect(error, `${tpl} should fail`).to.match(want);
      } else {
        expect(error, tpl).to.equal(undefined);
        expect(got, tpl).to.deep.equal(want);
      }
    }
  });

  it("values and templateValues: the whole values text is one template, and multi-line output is YAML", () => {
    const [h] = templateHelmValues([{
      helm: {
        values: { a: "${ .ClusterLabels.env }", nested: { list: ["${ .ClusterName }", 2] }, lbl: "global.fleet.clusterLabels.region" },
        templateValues: { block: "${ toJson .ClusterValues.list }", multi: "k1: ${ .ClusterName }\nk2: two" },
      },
      cluster, ctx: { gitRepo: "r", bundle: "b" },
    }]);
    expect(h.values).to.deep.equal({ a: "prod", nested: { list: ["eu-1", 2] }, lbl: "eu", block: ["a", "b"], multi: { k1: "eu-1", k2: "two" } });
  });
});
