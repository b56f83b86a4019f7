/**
 * The render sandbox's bounds (core/renderer/sandbox.ts, tools/fleet-render/sandbox.go): a job that hits
 * a limit fails alone, naming the limit, and every other job of the batch gets its real result; the
 * limits are the operator's environment and refuse nonsense.
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { rendererBinary, runRenderer } from "../../core/renderer/fleet-render";
import { sandboxLimits } from "../../core/renderer/sandbox";
import { withEnv } from "../support/env";

const chart = (template: string) => [
  { name: "Chart.yaml", content: "apiVersion: v2\nname: c\nversion: 0.1.0\n" },
  { name: "templates/cm.yaml", content: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  x: "${template}"\n` },
];
const job = (id: string, bundle: string) => ({
  id,
  bundle,
  releaseName: "r",
  namespace: "default",
  options: { helm: { chart: "." }, kustomize: {}, yaml: {} },
});
const FOREVER = "{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}";

describe("render sandbox: limits fail one job, never the batch", function () {
  this.timeout(120_000);

  it("an endless template times out alone; the other bundles of the batch render", async () => {
    const r = await withEnv({ PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "2" }, () =>
      runRenderer({
        bundles: {
          good: { name: "good", manifestId: "m", commit: "c", files: chart("{{ .Chart.Name }}") },
          loop: { name: "loop", manifestId: "m", commit: "c", files: chart(FOREVER) },
          other: { name: "other", manifestId: "m", commit: "c", files: chart("fine") },
        },
        renders: [job("a", "good"), job("b", "loop"), job("c", "other")],
      }),
    );
    expect(r.renders.b.error).to.match(/longer than the limit of 2 s per job \(PULUMI_FLEET_RENDER_TIMEOUT_SECONDS\)/);
    expect((r.renders.a.objects![0] as unknown as { data: Record<string, string> }).data.x).to.equal("c");
    expect((r.renders.c.objects![0] as unknown as { data: Record<string, string> }).data.x).to.equal("fine");
  });

  it("a GitRepo's looping jobs share one time limit: 3 of them cost it once, not one after the other, and fail naming it", async () => {
    rendererBinary(); // built before the clock starts
    const bundles = {
      good: { name: "good", manifestId: "m", commit: "c", files: chart("{{ .Chart.Name }}") },
      loop: { name: "loop", manifestId: "m", commit: "c", files: chart(FOREVER) },
      fine: { name: "fine", manifestId: "m", commit: "c", files: chart("fine") },
    };
    const renders = [job("l1", "loop"), job("l2", "loop"), job("a", "good"), job("l3", "loop"), job("f", "fine")];
    const start = Date.now();
    const r = await withEnv({ PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "60", PULUMI_FLEET_GITREPO_RENDER_SECONDS: "2" }, () =>
      runRenderer({
        bundles,
        renders: renders.map((j, i) => ({ ...j, options: { ...j.options, helm: { ...j.options.helm, releaseName: `r${i}` } } })),
        gitRepoOf: { renders: { l1: "evil", l2: "evil", l3: "evil", f: "evil", a: "other" } },
      }),
    );
    const elapsed = (Date.now() - start) / 1000;
    for (const id of ["l1", "l2", "l3"])
      expect(r.renders[id].error).to.match(/longer than the limit of 2 s per GitRepo \(PULUMI_FLEET_GITREPO_RENDER_SECONDS\)/);
    expect((r.renders.a.objects![0] as unknown as { data: Record<string, string> }).data.x).to.equal("c"); // another GitRepo's job
    expect(r.renders.f.error ?? "").to.satisfy((e: string) => e === "" || /PULUMI_FLEET_GITREPO_RENDER_SECONDS/.test(e)); // the same GitRepo: rendered if it finished in time
    expect(elapsed).to.be.lessThan(5); // the per-job limit alone made it 3 x 60 s; the GitRepo's 2 s once, nothing run again
  });

  it("values templating that exhausts memory fails that values job alone", async () => {
    const r = await withEnv({ PULUMI_FLEET_RENDER_MEMORY_MIB: "512" }, () =>
      runRenderer({
        clusters: { c1: { name: "c1", namespace: "fleet-default", labels: { env: "x" }, annotations: {}, templateValues: {} } },
        helm: {
          ok: { values: { a: "${ .ClusterLabels.env }" } },
          bomb: { values: { a: '${ $s := "xxxxxxxxxxxxxxxx" }${ range until 40 }${ $s = print $s $s }${ end }${ len $s }' } },
        },
        values: [
          ["c1", "ok"],
          ["c1", "bomb"],
          ["c1", "ok"],
        ],
      }),
    );
    const result = (i: number) => r.values[r.valueOf[i]];
    expect(result(1).error).to.match(/more than the limit of 512 MiB of memory \(PULUMI_FLEET_RENDER_MEMORY_MIB\)/);
    expect(result(0).values).to.deep.equal({ a: "x" });
    expect(result(2).values).to.deep.equal({ a: "x" });
  });

  it("fleet-render evaluates content only with --sandbox, and does network or cluster jobs only without it", () => {
    const content = spawnSync(rendererBinary(), [], { input: JSON.stringify({ yaml: { a: "x: 1" } }), encoding: "utf8" });
    expect(content.status).to.equal(2);
    expect(content.stderr).to.match(/yaml, values and renders jobs run only with --sandbox/);
    const pull = spawnSync(rendererBinary(), ["--sandbox"], {
      input: JSON.stringify({ pulls: [{ id: "0", chart: "https://example.com/c.tgz" }] }),
      encoding: "utf8",
    });
    expect(pull.status).to.equal(2);
    expect(pull.stderr).to.match(/pulls, owners, impersonate, readiness, discovery and lookupReads only without/);
    const discovery = spawnSync(rendererBinary(), ["--sandbox"], {
      input: JSON.stringify({ discovery: [{ id: "c1", kubeconfig: "", context: "" }] }),
      encoding: "utf8",
    });
    expect(discovery.status).to.equal(2);
  });

  it("limits come from the operator's environment, with defaults, and refuse nonsense", () => {
    expect(sandboxLimits({})).to.deep.equal({ jobSeconds: 120, memoryMiB: 2048, outputMiB: 64, totalOutputMiB: 256, gitRepoSeconds: 20, processes: 2 });
    expect(sandboxLimits({ PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "5", PULUMI_FLEET_RENDER_MEMORY_MIB: "900" })).to.include({ jobSeconds: 5, memoryMiB: 900 });
    expect(() => sandboxLimits({ PULUMI_FLEET_RENDER_MEMORY_MIB: "-1" })).to.throw(/PULUMI_FLEET_RENDER_MEMORY_MIB="-1": expected a positive number/);
    expect(() => sandboxLimits({ PULUMI_FLEET_RENDER_TOTAL_OUTPUT_MIB: "1000" })).to.throw(/up to 400/);
  });
});
