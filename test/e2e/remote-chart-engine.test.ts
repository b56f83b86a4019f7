/**
 * A Fleet repository shaped like fleet-examples' helm-kustomize (a chart that is not in the repository,
 * kustomize overlays per target as Fleet's post-render step) through the real engine in render mode:
 * the chart is pulled inside `pulumi up` from a real Helm repository or OCI registry on loopback, the
 * overlays apply per cluster, a no-op `up` deploys nothing, and a version range that now resolves to
 * a newer chart redeploys.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { chartSources, startChartRepo } from "../support/chart-repo";
import { localStack } from "../support/fleet-fixtures";
import { tempDir } from "../support/git-fixtures";

const TEMPLATES = {
  "cm.yaml":
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook-config\ndata:\n  chartVersion: {{ .Chart.Version | quote }}\n  replicas: {{ .Values.replicas | quote }}\n",
  "svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: frontend\nspec:\n  type: {{ .Values.serviceType }}\n  ports: [{port: 80}]\n",
};
const chart = (version: string) => ({ name: "guestbook", version, templates: TEMPLATES, values: "replicas: 1\nserviceType: ClusterIP\n" });

/** The repository: fleet.yaml naming the remote chart, overlays/dev and overlays/prod. */
function writeRepo(dir: string, helm: string): void {
  fs.mkdirSync(path.join(dir, "app/overlays/dev"), { recursive: true });
  fs.mkdirSync(path.join(dir, "app/overlays/prod"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "app/fleet.yaml"),
    `namespace: guestbook\nhelm:\n${helm}targetCustomizations:\n` +
      "- name: dev\n  clusterGroup: dev\n  kustomize: {dir: overlays/dev}\n" +
      "- name: prod\n  clusterGroup: prod\n  helm: {values: {replicas: 3}}\n  kustomize: {dir: overlays/prod}\n",
  );
  const overlay = (patch: string) =>
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\npatches:\n- patch: |\n${patch.replace(/^/gm, "    ")}\n`;
  fs.writeFileSync(
    path.join(dir, "app/overlays/dev/kustomization.yaml"),
    overlay("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook-config\ndata:\n  overlay: dev"),
  );
  fs.writeFileSync(
    path.join(dir, "app/overlays/prod/kustomization.yaml"),
    overlay("apiVersion: v1\nkind: Service\nmetadata:\n  name: frontend\nspec:\n  type: LoadBalancer"),
  );
}

/** The rendered objects of a cluster, by "Kind/name". */
function renderedObjects(renderDir: string, cluster: string): Record<string, any> {
  const dir = path.join(renderDir, cluster);
  const out: Record<string, any> = {};
  for (const f of (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".yaml"))) {
    for (const doc of YAML.parseAllDocuments(fs.readFileSync(path.join(dir, f), "utf8"))) {
      const o = doc.toJS();
      if (o?.kind && o.metadata?.namespace === "guestbook") out[`${o.kind}/${o.metadata.name}`] = o;
    }
  }
  return out;
}

describe("remote chart + kustomize overlays through the real engine (render mode)", function () {
  this.timeout(10 * 60_000);
  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
  });

  for (const kind of ["Helm repository", "OCI registry"] as const) {
    const what = kind === "Helm repository" ? "no-op up deploys nothing, a newer chart in the range redeploys" : "(the rest as above)";
    it(`${kind}: pulled during up, overlays per target; ${what}`, async () => {
      const sources = chartSources([chart("1.2.3"), chart("1.3.0")]);
      const registry = await startChartRepo(sources);
      try {
        await scenario(registry, sources, kind);
      } finally {
        await registry.stop();
      }
    });
  }

  async function scenario(registry: Awaited<ReturnType<typeof startChartRepo>>, sources: string, kind: "Helm repository" | "OCI registry") {
    const work = tempDir("pf-remote-e2e-");
    const renderDir = path.join(work, "render");
    const repoDir = path.join(work, "repo");
    fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
    const helm = (kind === "OCI registry" ? `  repo: ${registry.oci}/guestbook\n` : `  repo: ${registry.repo}\n  chart: guestbook\n`) + `  version: "~1.2"\n`;
    const config = (): StackConfig => {
      const base = localStack(renderDir);
      return {
        ...base,
        gitRepos: [
          {
            ...base.gitRepos[0],
            name: "remote",
            repo: repoDir,
            paths: ["app"],
            helmSecret: kind === "OCI registry" ? { insecureSkipVerify: false, basicHTTP: true } : undefined,
            allowedChartURLs: ["http://127\\.0\\.0\\.1:[0-9]+/.*"],
          },
        ],
      };
    };
    const options = (): ops.OperationOptions => ({
      stack: "remote",
      stateDir: path.join(work, "state"),
      stackConfigDir: path.join(work, "stacks"),
      config: config(),
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: "remote" },
    });

    writeRepo(repoDir, helm);
    const first = await ops.up(options());
    expect(first.events.map((e) => `${e.event} ${e.cluster}`).sort()).to.deep.equal(["deployed dev-1", "deployed dev-2", "deployed prod-1"]);
    for (const c of ["dev-1", "dev-2"]) {
      const objs = renderedObjects(renderDir, c);
      expect(objs["ConfigMap/guestbook-config"].data, c).to.deep.equal({ chartVersion: "1.2.3", replicas: "1", overlay: "dev" });
      expect(objs["Service/frontend"].spec.type, c).to.equal("ClusterIP");
    }
    const prod = renderedObjects(renderDir, "prod-1");
    expect(prod["ConfigMap/guestbook-config"].data).to.deep.equal({ chartVersion: "1.2.3", replicas: "3" });
    expect(prod["Service/frontend"].spec.type).to.equal("LoadBalancer");

    if (kind === "OCI registry") return ops.destroy(options()).then(() => undefined); // the rest is the same path, and costs a minute

    const noop = await ops.up(options());
    expect(noop.events).to.deep.equal([]);

    // 1.2.7 is published; the unchanged range now resolves to it: every cluster redeploys.
    chartSources([chart("1.2.7")], sources);
    await registry.reload();
    const bumped = await ops.up(options());
    expect(bumped.events.map((e) => `${e.event} ${e.cluster}`).sort()).to.deep.equal(["deployed dev-1", "deployed dev-2", "deployed prod-1"]);
    expect(renderedObjects(renderDir, "dev-1")["ConfigMap/guestbook-config"].data.chartVersion).to.equal("1.2.7");
    expect(renderedObjects(renderDir, "prod-1")["ConfigMap/guestbook-config"].data.chartVersion).to.equal("1.2.7");
    await ops.destroy(options());
  }
});
