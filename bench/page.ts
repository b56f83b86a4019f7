/**
 * `npm run bench -- page [--clusters 200] [--bundles 50] [--runs 3]`: the status page at fleet scale.
 * A synthetic StatusReport (every cluster gets every bundle; real-length deploymentIds; mostly Ready
 * with some of every other state; 10 cluster groups, 5 GitRepos) is rendered, written, and loaded in
 * headless Chromium. Reported: render time, file size, the browser's parse + layout time measured in
 * the page (navigation start to a forced layout at the end of the body), and the wall time of a
 * whole headless screenshot against that of an empty page (process start-up, paint, PNG). Medians.
 * Writes bench/results/page.json.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { measurePage, screenshot } from "../automation/reports/chromium";
import { renderStatusPage } from "../automation/reports/status-page";
import { DeploymentState, DeploymentStatus, STATE_RANK, StatusReport } from "../automation/reports/status";
import { arg, printTable, writeResult } from "./support";

const hex = (seed: number, n: number) => Array.from({ length: n }, (_, i) => ((seed * 7919 + i * 104729) % 16).toString(16)).join("");

/** Deterministic: the same sizes give the same page. */
export function syntheticReport(clusters: number, bundles: number): StatusReport {
  const names = Array.from({ length: clusters }, (_, i) => `cluster-${String(i).padStart(3, "0")}`);
  const repos = Array.from({ length: 5 }, (_, r) => `repo-${r}`);
  const bundleNames = Array.from({ length: bundles }, (_, b) => ({
    gitRepo: repos[b % repos.length],
    bundle: `${repos[b % repos.length]}-bundle-${String(b).padStart(2, "0")}`,
  }));
  const rare: DeploymentState[] = ["NotReady", "WaitApplied", "Modified", "ErrApplied", "OutOfSync", "Pending"];
  const deployments: DeploymentStatus[] = [];
  names.forEach((cluster, c) =>
    bundleNames.forEach(({ gitRepo, bundle }, b) => {
      if ((c + b) % 17 === 0) return; // not targeted
      const k = (c * 31 + b * 7) % 97;
      const state: DeploymentState = k < rare.length ? rare[k] : "Ready";
      deployments.push({
        gitRepo,
        bundle,
        cluster,
        state,
        deploymentId: `s-${hex(b, 61)}:${hex(c * 50 + b, 64)}`,
        appliedDeploymentId: state === "Pending" ? undefined : `s-${hex(b, 61)}:${hex(c * 50 + b, 64)}`,
        message: state === "Ready" ? "" : state === "Modified" ? `modified ConfigMap ns-${b}/cm-1 (data.key)` : `${state}: Deployment ns-${b}/app 0/2 ready`,
      });
    }),
  );
  const rollUp = (items: DeploymentStatus[]) => ({
    state: items.reduce<DeploymentState>((w, d) => (STATE_RANK[d.state] > STATE_RANK[w] ? d.state : w), "Ready"),
    readyClusters: items.filter((d) => d.state === "Ready").length,
    desiredReadyClusters: items.length,
  });
  return {
    stack: "bench",
    takenAt: new Date().toISOString(),
    deployments,
    bundles: bundleNames.map((b) => ({ ...b, ...rollUp(deployments.filter((d) => d.bundle === b.bundle)) })),
    // As Fleet counts them: a GitRepo's clusters, ready when all its bundles there are.
    gitRepos: repos.map((g) => {
      const mine = deployments.filter((d) => d.gitRepo === g);
      const perCluster = names.map((c) => mine.filter((d) => d.cluster === c)).filter((ds) => ds.length);
      return {
        gitRepo: g,
        commit: hex(g.length, 40),
        state: rollUp(mine).state,
        readyClusters: perCluster.filter((ds) => ds.every((d) => d.state === "Ready")).length,
        desiredReadyClusters: perCluster.length,
      };
    }),
    clusters: names.map((cluster, i) => {
      const r = rollUp(deployments.filter((d) => d.cluster === cluster));
      return {
        cluster,
        state: r.state,
        readyBundles: r.readyClusters,
        desiredReadyBundles: r.desiredReadyClusters,
        labels: { shard: String(i % 10) },
        groups: [`shard-${i % 10}`],
        reachable: true,
        agent: { image: "rancher/fleet-agent:v0.13.1", configHash: hex(i, 64), pinned: false },
      };
    }),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function pageBench(): Promise<void> {
  const count = (name: string, fallback: number) => {
    const v = Number(arg(name) ?? fallback);
    if (!Number.isInteger(v) || v < 1) throw new Error(`bench page: --${name} must be one positive number (got ${arg(name)})`);
    return v;
  };
  const clusters = count("clusters", 200);
  const bundles = count("bundles", 50);
  const runs = count("runs", 3);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-page-"));
  const report = syntheticReport(clusters, bundles);
  const t = performance.now();
  const html = renderStatusPage(report, { groupBy: { clusterGroup: true } });
  const renderMs = performance.now() - t;
  const file = path.join(dir, "status.html");
  fs.writeFileSync(file, html);
  const empty = path.join(dir, "empty.html");
  fs.writeFileSync(empty, "<!DOCTYPE html><html><body></body></html>");

  const probes = Array.from({ length: runs }, () => measurePage(file));
  const shots = Array.from({ length: runs }, () => screenshot(file, path.join(dir, "status.png"), probes[0]).ms);
  const emptyShots = Array.from(
    { length: runs },
    () => screenshot(empty, path.join(dir, "empty.png"), { width: probes[0].width, height: probes[0].height }).ms,
  );
  const row = {
    clusters,
    bundles,
    cells: clusters * bundles,
    "render (ms)": +renderMs.toFixed(0),
    "file (KiB)": +(Buffer.byteLength(html) / 1024).toFixed(0),
    "page (px)": `${probes[0].width}x${probes[0].height}`,
    "parse+layout in Chromium (ms)": median(probes.map((p) => p.layoutMs)),
    "screenshot wall (s)": +(median(shots) / 1000).toFixed(2),
    "empty page screenshot wall (s)": +(median(emptyShots) / 1000).toFixed(2),
  };
  printTable([row]);
  console.log(`result: ${writeResult("page", { runs, ...row })}`);
  fs.rmSync(dir, { recursive: true, force: true });
}
