/** Which Helm hooks a pair's step runs, and the deployments' warnings, as a preview tells them (automation/engine/hook-runs.ts, reports/pr-summary.ts). */
import { expect } from "chai";
import { hookRuns } from "../../automation/engine/hook-runs";
import { deploymentWarningLines, MAX_DEPLOYMENT_WARNINGS } from "../../automation/reports/pr-summary";
import type { PreviewReport } from "../../automation/reports/preview-report";

const hook = (kind: string, name: string, events: string[], weight = 0) => ({
  events,
  weight,
  manifest: JSON.stringify({ apiVersion: "v1", kind, metadata: { name, namespace: "web" } }),
});
const HOOKS = [
  hook("Job", "migrate", ["pre-install", "pre-upgrade"], 5),
  hook("ConfigMap", "seed", ["pre-upgrade"], -1),
  hook("Job", "notify", ["post-install", "post-upgrade"]),
  hook("Job", "goodbye", ["pre-delete"]),
];

describe("the Helm hooks a pair's step runs (automation/engine/hook-runs.ts)", () => {
  it("an install runs the install hooks, an upgrade (a new deploymentId) the upgrade hooks, a deletion the delete hooks, each phase by weight", () => {
    expect(hookRuns({ op: "create", inputs: { deploymentId: "a", hooks: HOOKS } })).to.deep.equal([
      "pre-install Job web/migrate",
      "post-install Job web/notify",
    ]);
    expect(hookRuns({ op: "update", oldInputs: { deploymentId: "a", hooks: HOOKS }, inputs: { deploymentId: "b", hooks: HOOKS } })).to.deep.equal([
      "pre-upgrade ConfigMap web/seed",
      "pre-upgrade Job web/migrate",
      "post-upgrade Job web/notify",
    ]);
    expect(hookRuns({ op: "delete", oldInputs: { deploymentId: "b", hooks: HOOKS } })).to.deep.equal(["pre-delete Job web/goodbye"]);
  });

  it("an update of the same release (a retry, a gate) and a pair without hooks run none; secret hooks are one line", () => {
    expect(hookRuns({ op: "update", oldInputs: { deploymentId: "a", hooks: HOOKS }, inputs: { deploymentId: "a", hooks: HOOKS } })).to.deep.equal([]);
    expect(hookRuns({ op: "create", inputs: { deploymentId: "a" } })).to.deep.equal([]);
    expect(hookRuns({ op: "same", inputs: { deploymentId: "a", hooks: HOOKS } })).to.deep.equal([]);
    const secret = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "[secret]" };
    expect(hookRuns({ op: "create", inputs: { deploymentId: "a", hooks: secret } })).to.deep.equal([
      "pre-install and post-install hooks (a secret: not shown)",
    ]);
  });
});

describe("deployment warnings in the PR summary (automation/reports/pr-summary.ts deploymentWarningLines)", () => {
  const report = (deploymentWarnings: { gitRepo: string; bundle: string; cluster: string; warnings: string[] }[]) =>
    ({ state: { bundles: [{ gitRepo: "g", name: "b", warnings: ["the bundle's own"] }] }, deploymentWarnings }) as unknown as PreviewReport;
  const pair = (cluster: string, ...warnings: string[]) => ({
    gitRepo: "g",
    bundle: "b",
    cluster,
    warnings: warnings.map((w) => `bundle b on cluster ${cluster}: ${w}`),
  });

  it("one line per distinct warning with its clusters, the bundle's own left to its own line, content escaped", () => {
    const lines = deploymentWarningLines(
      report([
        pair("c2", "a *hook* left out", "the bundle's own"),
        pair("c1", "a *hook* left out"),
        { ...pair("c3"), warnings: ["bundle b is paused on cluster c3: ..."] },
      ]),
    );
    expect(lines).to.deep.equal(["GitRepo `g` bundle `b` on cluster(s) `c1`, `c2`: a \\*hook\\* left out"]);
  });

  it("names 10 clusters a line and lists 50 lines at most, counting the rest", () => {
    const many = Array.from({ length: 12 }, (_, i) => pair(`c${String(i).padStart(2, "0")}`, "same"));
    expect(deploymentWarningLines(report(many))[0].endsWith("`c08`, `c09` and 2 more: same")).to.equal(true);
    const distinct = Array.from({ length: 60 }, (_, i) => pair("c1", `warning ${String(i).padStart(2, "0")}`));
    const lines = deploymentWarningLines(report(distinct));
    expect(lines).to.have.length(MAX_DEPLOYMENT_WARNINGS + 1);
    expect(lines[MAX_DEPLOYMENT_WARNINGS]).to.equal("… and 10 more deployment warning(s): the preview's output lists them all");
  });
});
