/**
 * `npm run bench:validate [-- --bundles 100 --runs 3]`: `npm run validate` over a generated repository
 * of N bundles (a third raw YAML with target customizations, a third local Helm charts, a third
 * kustomize), for the local stack's clusters: the whole command as a user runs it (process start,
 * TypeScript load, fleet-render), timed end to end. Prints median and max; writes bench/results/validate.json.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_DIR } from "../core/base/project-dir";
import { parseCommand, runMain } from "../scripts/cli";
import { printTable, seconds, writeResult } from "./support";

const SPEC = {
  usage: "npm run bench:validate -- [--bundles N] [--runs R]",
  summary: "npm run validate over a generated repository of N bundles (raw YAML, Helm, kustomize), for the local stack's clusters.",
  options: {
    bundles: { type: "string" as const, value: "N", help: "bundles in the repository (default 100)" },
    runs: { type: "string" as const, value: "R", help: "timed runs (default 3)" },
  },
};

function write(dir: string, file: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
}

const configMap = (b: number, o: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${o}\ndata:\n  bundle: "b${b}"\n`;
const configMaps = (b: number, n: number) => Array.from({ length: n }, (_, o) => configMap(b, o)).join("---\n");

/** One bundle of the given style in `dir`/b<NNN>. */
function bundle(dir: string, b: number): void {
  const at = `b${String(b).padStart(3, "0")}`;
  const ns = `bench-${b}`;
  if (b % 3 === 0) {
    write(
      dir,
      `${at}/fleet.yaml`,
      `defaultNamespace: ${ns}\ntargetCustomizations:\n  - name: prod\n    clusterSelector:\n      matchLabels: {env: prod}\n    yaml:\n      overlays: [prod]\n`,
    );
    for (let o = 0; o < 5; o++) write(dir, `${at}/cm-${o}.yaml`, configMap(b, o));
    write(dir, `${at}/overlays/prod/cm-0_patch.yaml`, `data:\n  env: prod\n`);
  } else if (b % 3 === 1) {
    write(
      dir,
      `${at}/fleet.yaml`,
      `defaultNamespace: ${ns}\nhelm:\n  chart: ./chart\n  releaseName: r${b}\n  values:\n    replicas: 1\ntargetCustomizations:\n  - name: prod\n    clusterSelector:\n      matchLabels: {env: prod}\n    helm:\n      values:\n        replicas: 3\n`,
    );
    write(dir, `${at}/chart/Chart.yaml`, `apiVersion: v2\nname: app${b}\nversion: 0.1.0\n`);
    write(
      dir,
      `${at}/chart/templates/deployment.yaml`,
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels: {app: {{ .Release.Name }}}\n  template:\n    metadata:\n      labels: {app: {{ .Release.Name }}}\n    spec:\n      containers:\n        - name: app\n          image: nginx:1.27\n`,
    );
  } else {
    write(dir, `${at}/fleet.yaml`, `defaultNamespace: ${ns}\nkustomize:\n  dir: base\n`);
    write(dir, `${at}/base/kustomization.yaml`, `resources: [objects.yaml]\ncommonLabels: {bundle: "${at}"}\n`);
    write(dir, `${at}/base/objects.yaml`, configMaps(b, 3));
  }
}

async function main(): Promise<void> {
  const { values } = parseCommand(process.argv.slice(2), SPEC);
  const bundles = Number(values.bundles ?? 100);
  const runs = Number(values.runs ?? 3);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-bench-validate-"));
  for (let b = 0; b < bundles; b++) bundle(dir, b);
  const times: number[] = [];
  let summary = "";
  try {
    for (let r = 0; r < runs; r++) {
      const started = Date.now();
      const out = execFileSync(
        process.execPath,
        [path.join(PROJECT_DIR, "scripts/run-ts.js"), path.join(PROJECT_DIR, "scripts/validate.ts"), dir, "--stack", "local"],
        {
          cwd: PROJECT_DIR,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"],
        },
      );
      times.push(Date.now() - started);
      summary = out.trim().split("\n").pop() ?? "";
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const sorted = [...times].sort((a, b) => a - b);
  const row = { bundles, runs, "median s": seconds(sorted[Math.floor(runs / 2)]), "max s": seconds(sorted[runs - 1]) };
  printTable([row]);
  console.log(`last run: ${summary}`);
  console.log(`wrote ${writeResult("validate", { ...row, times, summary })}`);
}

runMain(SPEC, main);
