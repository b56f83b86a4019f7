/**
 * The attack suite (issue 27): GitRepo content written by someone with push access, trying to reach
 * what only the runner may: its files, its environment, programs, the network, the Helm credentials,
 * unbounded time or memory, and paths outside the render directory. Each attack runs through the
 * `render` command and through `up` in render mode (the real engine), with canaries that must never
 * appear anywhere (output, errors, rendered files, requests received) and bounds that must hold (a
 * clear error naming the limit, within a time bound, no Go or Node stack trace).
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as ops from "../../automation/operations";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { GitRepoConfig, gitRepoEntry } from "../../core/config/git-repo";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { NESTED_FOREVER } from "../support/attack-content";
import { ChartRepo, chartSources, startChartRepo } from "../support/chart-repo";
import { localStack } from "../support/fleet-fixtures";
import { tempDir, TestRepo } from "../support/git-fixtures";

const tag = crypto.randomBytes(6).toString("hex");
const CANARY = { file: `CANARY-FILE-${tag}`, env: `CANARY-ENV-${tag}`, net: `CANARY-NET-${tag}`, cred: `CANARY-CRED-${tag}`, git: `CANARY-GIT-${tag}` };
const CANARIES = Object.values(CANARY);

/** The operator's limits for this suite: small, so that each bound is reached in seconds. */
const LIMITS = {
  PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "4",
  PULUMI_FLEET_RENDER_MEMORY_MIB: "640",
  PULUMI_FLEET_RENDER_OUTPUT_MIB: "16",
  PULUMI_FLEET_MAX_FILE_MIB: "2",
  PULUMI_FLEET_MAX_BUNDLE_MIB: "8",
  PULUMI_FLEET_CHART_PULL_TIMEOUT_SECONDS: "5",
};
/**
 * A job that grows without end meets the memory, output or time bound, whichever the machine's speed
 * makes fire first (a loaded machine reaches 4 s before 640 MiB): each bounds it, each names its setting.
 */
const EXHAUSTED =
  /limit of (640 MiB of memory \(PULUMI_FLEET_RENDER_MEMORY_MIB\)|16 MiB per job \(PULUMI_FLEET_RENDER_OUTPUT_MIB\)|4 s per job \(PULUMI_FLEET_RENDER_TIMEOUT_SECONDS\))/;
/** Every attack ends within this, limits included (the time limit is 4 s a job). */
const BOUND_MS = 45_000;

const CHART_YAML = "apiVersion: v2\nname: probe\nversion: 0.1.0\n";
const cm = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n${data}`;
const chart = (templates: Record<string, string>, extra: Record<string, string> = {}) => ({
  "chart/Chart.yaml": CHART_YAML,
  "chart/values.yaml": "{}\n",
  ...Object.fromEntries(Object.entries(templates).map(([n, t]) => [`chart/templates/${n}`, t])),
  ...extra,
});
const BILLION_LAUGHS = [
  "a: &a [x, x, x, x, x, x, x, x, x]",
  ..."bcdefghi".split("").map((c, i) => `${c}: &${c} [${Array(9).fill(`*${"abcdefghi"[i]}`).join(", ")}]`),
].join("\n");

interface Attack {
  name: string;
  /** The class of issue 27 it belongs to. */
  cls: "files" | "environment" | "programs" | "network" | "credentials" | "exhaustion" | "writes outside";
  files: (env: Env) => Record<string, string>;
  /** Symlinks: path in the repository -> target. */
  links?: (env: Env) => Record<string, string>;
  /** The cluster's labels (values templating runs only for a cluster with labels). */
  labels?: Record<string, string>;
  /** Expected: an error matching this, or (undefined) a render that succeeds. */
  error?: RegExp;
  /** The operator's limits for this attack, over the suite's. */
  limits?: Partial<typeof LIMITS>;
}

interface Env {
  runner: string;
  secretFile: string;
  remoteBase: string;
  net: ChartRepo;
  netURL: string;
}

const ATTACKS: Attack[] = [
  {
    name: "a hidden values file that is a symlink to a runner file",
    cls: "files",
    files: () => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n  valuesFiles: [.v.yaml]\n",
      ...chart({ "cm.yaml": cm("  all: {{ toJson .Values | quote }}\n") }),
    }),
    links: (e) => ({ ".v.yaml": e.secretFile }),
    error: /\.v\.yaml[\s\S]*(outside the repository|outside the bundle)/,
  },
  {
    name: "a values file in a hidden directory, a relative symlink climbing out of the checkout",
    cls: "files",
    files: () => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n  valuesFiles: [.hidden/v2.yaml]\n",
      ...chart({ "cm.yaml": cm("  all: {{ toJson .Values | quote }}\n") }),
    }),
    links: (e) => ({ ".hidden/v2.yaml": path.join("..", "..", "..", "..", "..", "..", "..", "..", e.secretFile) }),
    error: /v2\.yaml[\s\S]*outside the repository/,
  },
  {
    name: "fleet.yaml itself a symlink to a runner file (its keys must not reach the error)",
    cls: "files",
    files: () => ({ "cm.yaml": cm("  a: b\n") }),
    links: (e) => ({ "fleet.yaml": e.secretFile }),
    error: /fleet\.yaml[\s\S]*outside the repository/,
  },
  {
    name: "helm.chart climbing out to probe whether a runner path exists",
    cls: "files",
    files: () => ({ "fleet.yaml": "helm:\n  chart: ../../../../../../../../etc\n" }),
    error: /helm\.chart[\s\S]*leaves the repository/,
  },
  {
    name: ".Files.Get and .Files.Glob of runner paths",
    cls: "files",
    files: (e) => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart({
        "cm.yaml": cm(
          `  a: {{ .Files.Get ${JSON.stringify(e.secretFile)} | quote }}\n  b: {{ .Files.Get "../../../../../../../${e.secretFile}" | quote }}\n  c: {{ .Files.Glob "/**" | len | quote }}\n`,
        ),
      }),
    }),
  },
  {
    name: "a kustomize resource outside the bundle",
    cls: "files",
    files: (e) => ({ "kustomization.yaml": `resources:\n  - ${path.relative("/", e.secretFile).replace(/^/, "../../../../../../../../")}\n` }),
    // Kustomize sees an in-memory copy of the bundle only: the runner's file does not exist there.
    error: /accumulating resources[\s\S]*doesn't exist/,
  },
  {
    name: "values.schema.json $ref to a runner file and to a URL",
    cls: "files",
    error: /values don't meet the specifications[\s\S]*operation not permitted/,
    files: (e) => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart(
        { "cm.yaml": cm("  a: b\n") },
        {
          "chart/values.schema.json": JSON.stringify({
            type: "object",
            properties: { a: { $ref: `file://${e.secretFile}` }, b: { $ref: `${e.netURL}/files/schema.json` } },
          }),
        },
      ),
    }),
  },
  {
    name: "env and expandenv in a chart template and in ${ } values",
    cls: "environment",
    labels: { env: "attack" },
    files: () => ({
      "fleet.yaml": 'helm:\n  chart: ./chart\n  values:\n    v: ${ env "PF_ATTACK_CANARY" }${ expandenv "$PF_ATTACK_CANARY" }\n',
      ...chart({ "cm.yaml": cm("  v: {{ .Values.v | quote }}\n") }),
    }),
    error: /helm\.values: [\s\S]*function "env" not defined/,
  },
  {
    name: "env in a chart template",
    cls: "environment",
    files: () => ({ "fleet.yaml": "helm:\n  chart: ./chart\n", ...chart({ "cm.yaml": cm('  e: {{ env "PF_ATTACK_CANARY" | quote }}\n') }) }),
    error: /env/,
  },
  {
    name: "a kustomize remote git base (file://), which would run git with the runner's environment",
    cls: "programs",
    files: (e) => ({ "kustomization.yaml": `resources:\n  - file://${e.remoteBase}\n` }),
    error: /a remote kustomize base is not fetched/,
  },
  {
    name: "a kustomize remote base over https (git::)",
    cls: "programs",
    files: () => ({ "kustomization.yaml": "resources:\n  - https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1\n" }),
    error: /not fetched/,
  },
  {
    name: "a kustomize resource over http (a metadata-service credential, in real life)",
    cls: "network",
    files: (e) => ({ "kustomization.yaml": `resources:\n  - ${e.netURL}/files/canary.yaml\n` }),
    error: /not fetched/,
  },
  {
    name: "a kustomize resource from a server that never answers",
    cls: "network",
    files: (e) => ({ "kustomization.yaml": `resources:\n  - ${e.netURL}/stall/x.yaml\n` }),
    error: /not fetched/,
  },
  {
    name: "configMapGenerator files from http",
    cls: "network",
    files: (e) => ({ "kustomization.yaml": `configMapGenerator:\n  - name: leak\n    files:\n      - ${e.netURL}/files/canary.yaml\n` }),
    error: /not fetched|refused|operation not permitted|kustomize|security|invalid/i,
  },
  {
    name: "getHostByName from a chart template",
    cls: "network",
    files: () => ({ "fleet.yaml": "helm:\n  chart: ./chart\n", ...chart({ "cm.yaml": cm('  ip: {{ getHostByName "localhost" | quote }}\n') }) }),
    // No resolver in the sandbox: Helm's function finds no address and fails.
    error: /getHostByName/,
  },
  {
    name: "a remote chart from a URL the operator did not allow",
    cls: "network",
    files: (e) => ({ "fleet.yaml": `helm:\n  chart: ${e.netURL}/files/canary.tgz\n` }),
    error: /allowedChartURLs/,
  },
  {
    name: "a chart dependency at an absolute file:// path (a runner directory)",
    cls: "files",
    files: (e) => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart(
        { "cm.yaml": cm("  a: b\n") },
        { "chart/Chart.yaml": `${CHART_YAML}dependencies:\n- name: runner\n  version: "*"\n  repository: file://${path.dirname(e.secretFile)}\n` },
      ),
    }),
    error: /dependency runner: file:\/\/\S+ is not a chart directory inside the GitRepo/,
  },
  {
    name: "a chart dependency climbing out of the checkout (file://../..)",
    cls: "files",
    files: (e) => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart(
        { "cm.yaml": cm("  a: b\n") },
        {
          "chart/Chart.yaml": `${CHART_YAML}dependencies:\n- name: up\n  version: "*"\n  repository: file://../../../../../../../..${path.dirname(e.secretFile)}\n`,
        },
      ),
    }),
    error: /dependency up: file:\/\/\S+ is not a chart directory inside the GitRepo/,
  },
  {
    name: "a chart dependency from a URL the operator did not allow",
    cls: "network",
    files: (e) => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart(
        { "cm.yaml": cm("  a: b\n") },
        { "chart/Chart.yaml": `${CHART_YAML}dependencies:\n- name: demo\n  version: "*"\n  repository: ${e.netURL}/charts\n` },
      ),
    }),
    error: /allowedChartURLs/,
  },
  {
    name: "an endless range in a chart template",
    cls: "exhaustion",
    files: () => ({ "fleet.yaml": "helm:\n  chart: ./chart\n", ...chart({ "cm.yaml": cm(`  x: "${NESTED_FOREVER}"\n`) }) }),
    error: /longer than the limit of 4 s per job \(PULUMI_FLEET_RENDER_TIMEOUT_SECONDS\)/,
  },
  {
    name: "an endless range in ${ } values",
    cls: "exhaustion",
    labels: { env: "attack" },
    files: () => ({
      "fleet.yaml": `helm:\n  chart: ./chart\n  values:\n    x: "${NESTED_FOREVER.replace(/\{\{/g, "${").replace(/\}\}/g, "}")}"\n`,
      ...chart({ "cm.yaml": cm("  a: b\n") }),
    }),
    error: /longer than the limit of 4 s per job \(PULUMI_FLEET_RENDER_TIMEOUT_SECONDS\)/,
  },
  {
    name: "a string doubled until memory runs out",
    cls: "exhaustion",
    files: () => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart({ "cm.yaml": cm(`  x: "{{ $s := "xxxxxxxxxxxxxxxx" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ len $s }}"\n`) }),
    }),
    // Memory or time, whichever the machine's speed makes fire first: both bound the attack (the time bound is its thread's own).
    error: EXHAUSTED,
  },
  {
    name: "a small chart whose output is hundreds of MB",
    cls: "exhaustion",
    files: () => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart({ "cm.yaml": cm(`  x: "{{ range until 300000 }}{{ repeat 1000 "x" }}{{ end }}"\n`) }),
    }),
    error: EXHAUSTED,
  },
  {
    name: "a chart emitting lists nested 9,000 deep (a stack overflow in the caller's JavaScript)",
    cls: "exhaustion",
    files: () => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n",
      ...chart({ "cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nspec:\n  x: {{ repeat 9000 "[" }}{{ repeat 9000 "]" }}\n' }),
    }),
    error: /nests objects and lists more than 512 levels deep/,
  },
  {
    name: "${ } values templated into lists nested 9,000 deep",
    cls: "exhaustion",
    labels: { env: "attack" },
    files: () => ({
      "fleet.yaml": 'helm:\n  chart: ./chart\n  values:\n    x: ${ repeat 9000 "[" }${ repeat 9000 "]" }\n',
      ...chart({ "cm.yaml": cm("  a: b\n") }),
    }),
    error: /nests objects and lists more than 512 levels deep/,
  },
  {
    name: "a .fleetignore line of many stars against a long file name (a backtracking regex never ends)",
    cls: "exhaustion",
    files: () => ({ "cm.yaml": cm("  a: b\n"), ".fleetignore": `${"*a".repeat(30)}b\n`, ["a".repeat(200)]: "x\n" }),
  },
  {
    name: "a .fleetignore line of a million spaces (quadratic trimming)",
    cls: "exhaustion",
    files: () => ({ "cm.yaml": cm("  a: b\n"), ".fleetignore": `x${" ".repeat(1_000_000)}y\n` }),
  },
  {
    name: "a values file of 150,000 keys (a duplicate-key check comparing each key with every other)",
    cls: "exhaustion",
    files: () => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n  valuesFiles: [v.yaml]\n",
      ...chart({ "cm.yaml": cm("  a: b\n") }),
      "v.yaml": Array.from({ length: 150_000 }, (_, i) => `k${i}: 1`).join("\n") + "\n",
    }),
    // A linear check takes seconds, more on a loaded machine than the suite's 4-s job limit allows; a
    // quadratic one (10^10 comparisons) takes minutes, past this limit and the attack's bound.
    limits: { PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "40" },
  },
  {
    name: "a push of 1,500 tiny bundles (a plan multiplied by the fleet's size)",
    cls: "exhaustion",
    files: () => Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`b${i}/fleet.yaml`, "{}\n"])),
    error: /1500 bundles, over the limit of 1000 per GitRepo \(PULUMI_FLEET_MAX_BUNDLES\)/,
  },
  {
    // Each fails alone (one owner per object): the failures must be found in one pass, not one check per failure.
    name: "a push of 900 bundles that all deploy the same object (each fails alone)",
    cls: "exhaustion",
    // Pushed beside the good bundle (kept at the root): it must deploy on, untouched.
    files: () => ({
      "cm.yaml": cm("  good: yes\n").replace("name: probe", "name: good"),
      ...Object.fromEntries(
        Array.from({ length: 900 }, (_, i) => [
          [`b${i}/fleet.yaml`, "{}\n"],
          [`b${i}/cm.yaml`, cm("  a: b\n")],
        ]).flat(),
      ),
    }),
    error: /ConfigMap default\/probe is also deployed by bundle attack-b\d+/,
  },
  {
    name: "an alias bomb in a kustomize resource",
    cls: "exhaustion",
    files: () => ({
      "kustomization.yaml": "resources: [bomb.yaml]\n",
      "bomb.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  ${BILLION_LAUGHS.replace(/\n/g, "\n  ")}\n`,
    }),
    error: /aliases expand to more than/,
  },
  {
    name: "an alias bomb in a raw manifest",
    cls: "exhaustion",
    files: () => ({ "cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n${BILLION_LAUGHS}\n` }),
    error: /aliases expand to more than/,
  },
  {
    name: "an alias bomb in a values file",
    cls: "exhaustion",
    files: () => ({
      "fleet.yaml": "helm:\n  chart: ./chart\n  valuesFiles: [v.yaml]\n",
      "v.yaml": BILLION_LAUGHS + "\n",
      ...chart({ "cm.yaml": cm("  a: b\n") }),
    }),
    // The syntax check (JavaScript's yaml) refuses it first; fleet-render's bound is behind it.
    error: /v\.yaml[\s\S]*(Excessive alias count|aliases expand to more than|nodes once its aliases are expanded)/,
  },
  {
    name: "a values file that is a symlink to /dev/zero",
    cls: "exhaustion",
    files: () => ({ "fleet.yaml": "helm:\n  chart: ./chart\n  valuesFiles: [v.yaml]\n", ...chart({ "cm.yaml": cm("  a: b\n") }) }),
    links: () => ({ "v.yaml": "/dev/zero" }),
    error: /v\.yaml[\s\S]*outside the repository/,
  },
  {
    name: "a .fleetignore that is a symlink to /dev/zero",
    cls: "exhaustion",
    files: () => ({ "cm.yaml": cm("  a: b\n") }),
    links: () => ({ ".fleetignore": "/dev/zero" }),
    error: /\.fleetignore[\s\S]*outside the repository/,
  },
  {
    name: "a file over the per-file limit",
    cls: "exhaustion",
    files: () => ({ "cm.yaml": cm(`  a: "${"x".repeat(3 * 1024 * 1024)}"\n`) }),
    error: /cm\.yaml[\s\S]*over the limit of 2 MiB per file \(PULUMI_FLEET_MAX_FILE_MIB\)/,
  },
  {
    name: "an object named ../../../escape",
    cls: "writes outside",
    files: () => ({ "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../../../escape\ndata:\n  a: b\n" }),
    error: /metadata\.name must be a lowercase RFC 1123 subdomain/,
  },
  {
    name: "an object in namespace ../../escape",
    cls: "writes outside",
    files: () => ({ "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n  namespace: ../../escape\ndata:\n  a: b\n" }),
    error: /metadata\.namespace "\.\.\/\.\.\/escape" must be a lowercase RFC 1123 label/,
  },
  {
    name: "an object of kind ../../../../Escape (render mode names files after the kind)",
    cls: "writes outside",
    files: () => ({ "cm.yaml": "apiVersion: v1\nkind: ../../../../Escape\nmetadata:\n  name: ok\ndata:\n  a: b\n" }),
    error: /kind "\.\.\/\.\.\/\.\.\/\.\.\/Escape" of "ok" must be an RFC 1035 label/,
  },
  {
    name: "a bundle named ../../escape in fleet.yaml",
    cls: "writes outside",
    files: () => ({ "fleet.yaml": "name: ../../escape\n", "cm.yaml": cm("  a: b\n") }),
    error: /bundle name "\.\.\/\.\.\/escape" must be a lowercase RFC 1123 label/,
  },
];

function writeRepo(dir: string, a: Attack, e: Env): void {
  for (const [name, content] of Object.entries(a.files(e))) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  for (const [name, target] of Object.entries(a.links?.(e) ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.symlinkSync(target, path.join(dir, name));
  }
}

/** Everything under `dir`, as text (for canaries). */
function allText(dir: string): string {
  if (!fs.existsSync(dir)) return "";
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), "utf8"))
    .join("\n");
}

function expectNoCanary(what: string, text: string): void {
  for (const c of CANARIES) expect(text.includes(c), `${what}: canary ${c} appeared:\n${text.slice(0, 2000)}`).to.equal(false);
}

describe("attack suite: GitRepo content cannot reach the runner (issue 27)", function () {
  this.timeout(30 * 60_000);
  const work = tempDir("pf-attack-");
  const runner = path.join(work, "runner");
  const requestLog = path.join(work, "requests.log");
  const tmp = path.join(work, "tmp");
  let env: Env;
  let net: ChartRepo;
  const figures: string[] = [];

  before(async () => {
    fs.mkdirSync(runner);
    fs.mkdirSync(tmp);
    const secretFile = path.join(runner, "Pulumi.prod.yaml");
    fs.writeFileSync(secretFile, `config:\n  leaked: ${CANARY.file}\n`);
    fs.writeFileSync(path.join(runner, "secret.json"), JSON.stringify({ type: "string", const: CANARY.file }));
    const remote = new TestRepo({ "kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": cm(`  a: ${CANARY.git}\n`) });
    const served = path.join(work, "served");
    fs.mkdirSync(served);
    fs.writeFileSync(path.join(served, "canary.yaml"), cm(`  a: ${CANARY.net}\n`));
    fs.writeFileSync(path.join(served, "schema.json"), JSON.stringify({ type: "string", const: CANARY.net }));
    net = await startChartRepo(chartSources([{ name: "demo", version: "1.0.0", templates: { "cm.yaml": cm("  a: b\n") } }]), {
      files: served,
      log: requestLog,
    });
    env = { runner, secretFile, remoteBase: remote.dir, net, netURL: net.url };
  });

  after(async () => {
    await net?.stop();
    if (figures.length) console.log(`      attack figures:\n${figures.map((f) => `        ${f}`).join("\n")}`);
  });

  const received = () => (fs.existsSync(requestLog) ? fs.readFileSync(requestLog, "utf8").split("\n").filter(Boolean) : []);

  for (const a of ATTACKS) {
    it(`render: ${a.cls}: ${a.name}`, () => {
      const dir = tempDir("pf-attack-repo-");
      writeRepo(dir, a, env);
      const before = received().length;
      const tmpBefore = fs.readdirSync(tmp).length;
      const t = Date.now();
      const args = [
        path.join(PROJECT_DIR, "scripts/run-ts.js"),
        path.join(PROJECT_DIR, "scripts/render.ts"),
        dir,
        "--name",
        "attack",
        ...Object.entries(a.labels ?? {}).flatMap(([k, v]) => ["--label", `${k}=${v}`]),
      ];
      const r = spawnSync(process.execPath, args, {
        encoding: "utf8",
        cwd: PROJECT_DIR,
        timeout: BOUND_MS * 2,
        env: { ...process.env, ...LIMITS, ...a.limits, PF_ATTACK_CANARY: CANARY.env, TMPDIR: tmp },
      });
      const ms = Date.now() - t;
      figures.push(`render ${a.name}: ${(ms / 1000).toFixed(1)} s, exit ${r.status}`);
      const output = `${r.stdout}\n${r.stderr}`;
      expectNoCanary(a.name, output);
      expect(ms, `${a.name}: within the bound`).to.be.lessThan(BOUND_MS);
      expect(output, "no stack trace").to.not.match(/goroutine \d+ \[|RangeError|\n\s+at .*\.ts:\d+/);
      if (a.error) {
        expect(r.status, output).to.equal(1);
        expect(r.stderr, r.stderr).to.match(a.error);
        expect(r.stderr, "the error names the GitRepo").to.match(/gitRepo attack/);
      } else {
        expect(r.status, output).to.equal(0);
      }
      expect(received().slice(before), "no request reached the network").to.deep.equal([]);
      expect(fs.readdirSync(tmp).length, "nothing left in TMPDIR").to.equal(tmpBefore);
    });
  }

  it("render: a chart repository's credentials never leave the hosts helmRepoURLRegex matches (userinfo, absolute index.yaml URLs, redirects)", async () => {
    // Server B is where index.yaml's absolute chart URLs and a redirect lead; only A is meant to get credentials.
    const bLog = path.join(work, "b.log");
    const b = await startChartRepo(chartSources([{ name: "demo", version: "1.0.0", templates: { "cm.yaml": cm("  a: b\n") } }]), { log: bLog });
    const aLog = path.join(work, "a.log");
    const a = await startChartRepo(chartSources([{ name: "demo", version: "1.0.0", templates: { "cm.yaml": cm("  a: b\n") } }]), {
      log: aLog,
      user: "fleet",
      password: CANARY.cred,
      chartURLBase: `${b.url}/charts`,
      redirects: { "/moved/index.yaml": `${b.url}/charts/index.yaml` },
    });
    try {
      const esc = (s: string) => s.replace(/[.]/g, "\\.");
      const repoCfg = (over: Partial<GitRepoConfig>): GitRepoConfig => ({
        ...gitRepoEntry("attack", ""),
        helmSecret: { username: "fleet", password: CANARY.cred, insecureSkipVerify: false, basicHTTP: false },
        helmRepoURLRegex: `${esc(a.url)}/`,
        allowedChartURLs: [`${esc(a.url)}/.*`, `${esc(b.url)}/.*`],
        ...over,
      });
      const { readBundles } = await import("../../core/bundles/read");
      const attempt = async (fleetYaml: string, over: Partial<GitRepoConfig> = {}) => {
        const dir = tempDir("pf-attack-cred-");
        fs.writeFileSync(path.join(dir, "fleet.yaml"), fleetYaml);
        try {
          await readBundles(dir, { ...repoCfg(over), repo: dir });
          return "";
        } catch (err) {
          return (err as Error).message;
        }
      };
      const host = new URL(a.url).host;
      // Userinfo that makes the URL text start like an allowed host.
      const userinfo = await attempt(`helm:\n  repo: http://charts.example.com@${host}/charts\n  chart: demo\n`, {
        helmRepoURLRegex: "http://charts\\.example\\.com",
      });
      expect(userinfo).to.match(/userinfo are refused/);
      // index.yaml lists absolute chart URLs on B: B is allowed, but gets no credentials.
      await attempt(`helm:\n  repo: ${a.url}/charts\n  chart: demo\n  version: 1.0.0\n`);
      // A redirect from A to B.
      await attempt(`helm:\n  repo: ${a.url}/moved\n  chart: demo\n  version: 1.0.0\n`);
      const bRequests = fs.existsSync(bLog)
        ? fs
            .readFileSync(bLog, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [];
      expect(bRequests.length, "B was asked (the attack reached it)").to.be.greaterThan(0);
      expect(
        bRequests.filter((r) => r.authorization),
        "no request to B carried credentials",
      ).to.deep.equal([]);
      const aRequests = fs
        .readFileSync(aLog, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(
        aRequests.some((r) => r.authorization),
        "A got them",
      ).to.equal(true);
      expectNoCanary("credential errors", userinfo);
      expectNoCanary("B's requests", JSON.stringify(bRequests.map((r) => Buffer.from(String(r.authorization).replace(/^Basic /, ""), "base64").toString())));
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  describe("up in render mode (the real engine)", () => {
    const renderDir = path.join(work, "render");
    const stateDir = path.join(work, "state");
    const options = (config: StackConfig): ops.OperationOptions => ({
      stack: "attack",
      stateDir,
      stackConfigDir: path.join(work, "stacks"),
      config,
      deploy: { cacheRoot: path.join(work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: "attack" },
    });
    let repo: TestRepo;
    const config = (): StackConfig => {
      const base = localStack(renderDir);
      return {
        ...base,
        clusters: base.clusters.slice(0, 1).map((c) => ({ ...c, labels: { ...c.labels, env: "attack" } })),
        clusterGroups: [],
        gitRepos: [
          {
            name: "attack",
            repo: repo.url(),
            paths: [],
            targets: [{ name: "all", clusterSelector: {} }],
            keepResources: false,
            deleteNamespace: false,
            paused: false,
            allowEmpty: false,
            insecureSkipTLSVerify: false,
          },
        ],
      };
    };
    const saved: Record<string, string | undefined> = {};

    let baseline: Awaited<ReturnType<typeof ops.up>>;
    before(async () => {
      toolchain();
      fs.mkdirSync(path.join(work, "stacks"), { recursive: true });
      for (const [k, v] of Object.entries({ ...LIMITS, PF_ATTACK_CANARY: CANARY.env })) {
        saved[k] = process.env[k];
        process.env[k] = v;
      }
      repo = new TestRepo({ "cm.yaml": cm("  good: yes\n").replace("name: probe", "name: good") });
      // The baseline every attack must leave standing (here, so that any one attack can run alone).
      baseline = await ops.up(options(config()));
    });
    after(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });

    it("a good first up: the baseline every attack must leave standing", () => {
      expect(baseline.events.length).to.equal(1);
      expect(allText(renderDir)).to.contain("name: good");
    });

    for (const a of ATTACKS) {
      it(`up: ${a.cls}: ${a.name}`, async () => {
        // The attack replaces the repository's content in one push.
        const files: Record<string, string | null> = { "cm.yaml": null };
        repo.commit({ ...files, ...a.files(env) }, `attack: ${a.name}`);
        for (const [name, target] of Object.entries(a.links?.(env) ?? {})) repo.symlink(target, name);
        try {
          await attackUp(a);
        } finally {
          // Back to the good content for the next attack.
          repo.git("rm", "-rq", "--ignore-unmatch", ".");
          repo.commit({ "cm.yaml": cm("  good: yes\n").replace("name: probe", "name: good") }, "restore");
          if (!a.error) await ops.up(options(config()));
        }
      });
    }

    async function attackUp(a: Attack): Promise<void> {
      const before = received().length;
      // The operation's own directories (state, workspace, git cache, render) may appear on a first run; nothing else may.
      const besideRender = () =>
        fs
          .readdirSync(work)
          .filter((f) => !["state", "workspace", "git-cache", "render"].includes(f))
          .sort();
      const beside = besideRender();
      const t = Date.now();
      let message = "";
      const suite = Object.fromEntries(Object.keys(a.limits ?? {}).map((k) => [k, process.env[k]]));
      Object.assign(process.env, a.limits);
      try {
        await ops.up(options(config()));
      } catch (err) {
        message = (err as Error).message;
      } finally {
        Object.assign(process.env, suite);
      }
      const ms = Date.now() - t;
      figures.push(`up ${a.name}: ${(ms / 1000).toFixed(1)} s`);
      expectNoCanary(a.name, message);
      expectNoCanary(`${a.name}: rendered files`, allText(renderDir));
      expectNoCanary(`${a.name}: state`, allText(stateDir));
      expect(ms, `${a.name}: within the bound`).to.be.lessThan(BOUND_MS * 2);
      expect(received().slice(before), "no request reached the network").to.deep.equal([]);
      expect(besideRender(), "nothing written beside the render directory").to.deep.equal(beside);
      if (a.error) {
        expect(message, message)
          .to.match(a.error)
          .and.match(/gitRepo attack/);
        expect(message, "no stack trace").to.not.match(/goroutine \d+ \[|RangeError/);
        // Nothing is deleted because of it: the last good deployment stays rendered.
        expect(allText(renderDir), "the good deployment is still there").to.contain("name: good");
      } else {
        expect(message).to.equal("");
      }
    }
  });
});
