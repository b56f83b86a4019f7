/**
 * fleet.yaml `helm.valuesFrom` (issue 43): parsed and merged by key as Fleet's options merge does,
 * read from the target cluster with the deploying identity (fake facts here), merged over the values in
 * Fleet's agent's order by fleet-render, a failure in Fleet's words failing its pair alone, a changed
 * value a new deploymentID, and what a Secret gives a secret (core/render/values-from.ts,
 * core/desired/read-values-from.ts).
 */
import { expect } from "chai";
import { parseFleetYaml } from "../../core/bundles/fleetyaml";
import { ValuesFrom } from "../../core/bundles/types";
import { desiredState } from "../../core/desired/state";
import { FleetState } from "../../core/plan/pipeline";
import { DesiredState } from "../../core/desired/types";
import { StackConfig } from "../../core/config/stack";
import { FleetError } from "../../core/base/errors";
import { LookupAnswer, LookupJob, LookupKey } from "../../core/model/renderer-protocol";
import { maxValuesFrom, resolveValuesFrom, valuesFromProblem, valuesFromRefs, withValuesDigest } from "../../core/render/values-from";
import { mergeOptions } from "../../core/targeting/merge";
import { discovered, fakeFacts, nothingExists } from "../support/fake-facts";
import { gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const where = { gitRepo: "t", bundle: "t-app", cluster: "c1" };
const cm = (name: string, data: Record<string, string>, extra: object = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, uid: `uid-${name}` },
  data,
  ...extra,
});
const secret = (name: string, data: Record<string, string>, uid = `uid-${name}`) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, uid },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});
const answers =
  (objects: Record<string, Record<string, unknown> | { error: string }>) =>
  (key: LookupKey): LookupAnswer => {
    const o = objects[`${key.kind} ${key.namespace}/${key.name}`];
    return o && "error" in o ? { key, error: o.error as string } : { key, ...(o ? { object: o } : {}) };
  };

describe("helm.valuesFrom: parsing and merging (core/bundles/fleetyaml.ts, core/targeting/merge.ts)", () => {
  it("reads both refs, top level and per targetCustomization, with Fleet's field matching", () => {
    const fy = parseFleetYaml(
      {
        helm: { valuesFrom: [{ configMapKeyRef: { name: "cm", namespace: "ns", key: "k" }, SecretKeyRef: { name: "s" } }, {}] },
        targetCustomizations: [{ name: "prod", clusterName: "c2", helm: { valuesFrom: [{ secretKeyRef: { name: "prod-creds" } }] } }],
      },
      "app/fleet.yaml",
    );
    expect(fy.options.helm?.valuesFrom).to.deep.equal([{ configMapKeyRef: { name: "cm", namespace: "ns", key: "k" }, secretKeyRef: { name: "s" } }, {}]);
    expect(fy.unhonoured).to.deep.equal([
      "helm.valuesFrom[0].SecretKeyRef: read as secretKeyRef (Fleet matches fleet.yaml field names without regard to case)",
    ]);
    expect(fy.targetCustomizations[0].helm?.valuesFrom).to.deep.equal([{ secretKeyRef: { name: "prod-creds" } }]);
    expect(() => parseFleetYaml({ helm: { valuesFrom: { configMapKeyRef: { name: "x" } } } }, "f.yaml")).to.throw(/helm\.valuesFrom: must be a list/);
    expect(() => parseFleetYaml({ helm: { valuesFrom: [{ configMapKeyRef: { name: 3 } }] } }, "f.yaml")).to.throw(
      /helm\.valuesFrom\[0\]\.configMapKeyRef\.name: must be a string/,
    );
  });

  it("a customization's entry replaces the base's of the same key in place, others are appended, a repeated key counts once (Fleet's merge.ByKey)", () => {
    const ref = (name: string, key?: string): ValuesFrom => ({ configMapKeyRef: { name, ...(key ? { key } : {}) } });
    const base = { helm: { valuesFrom: [ref("a"), ref("b"), { secretKeyRef: { name: "a" } }] } };
    const custom = { helm: { valuesFrom: [{ ...ref("b"), secretKeyRef: { name: "extra" } }, ref("c"), ref("c", "other"), ref("c"), {}] } };
    expect(mergeOptions(base, custom).helm?.valuesFrom).to.deep.equal([
      ref("a"),
      { ...ref("b"), secretKeyRef: { name: "extra" } },
      { secretKeyRef: { name: "a" } },
      ref("c"),
      ref("c", "other"),
      {},
    ]);
    // Without the customization's own, the base's are kept; neither has one: none.
    expect(mergeOptions(base, { helm: { values: { x: 1 } } }).helm?.valuesFrom).to.deep.equal(base.helm.valuesFrom);
    expect(mergeOptions({}, { helm: {} }).helm).to.not.have.property("valuesFrom");
  });

  it("each entry's configMapKeyRef, then its secretKeyRef; the namespace defaults to the deployment's, the key to values.yaml", () => {
    const refs = valuesFromRefs(
      {
        helm: {
          valuesFrom: [
            { secretKeyRef: { name: "s1" }, configMapKeyRef: { name: "c1", namespace: "other", key: "k" } },
            { secretKeyRef: { name: "s2", key: "v" } },
          ],
        },
      },
      "app-ns",
    );
    expect(refs).to.deep.equal([
      { kind: "ConfigMap", namespace: "other", name: "c1", key: "k" },
      { kind: "Secret", namespace: "app-ns", name: "s1", key: "values.yaml" },
      { kind: "Secret", namespace: "app-ns", name: "s2", key: "v" },
    ]);
  });
});

describe("helm.valuesFrom: what may be read, and what the answers give (core/render/values-from.ts)", () => {
  const ref = (kind: "ConfigMap" | "Secret", namespace: string, name: string, key = "values.yaml") => ({ kind, namespace, name, key });

  it("reads only the GitRepo's namespaces, naming the field and the stack setting; bounded; a reference without a name fails in the client's words", () => {
    const scope = { namespace: "app", allowed: undefined };
    expect(valuesFromProblem([ref("ConfigMap", "app", "cm"), ref("Secret", "app", "s")], scope, where)).to.equal(undefined);
    const out = valuesFromProblem([ref("ConfigMap", "app", "cm"), ref("Secret", "kube-system", "admin")], scope, { ...where, file: "app/fleet.yaml" })!;
    expect(out.message).to.equal(
      "app/fleet.yaml gitRepo t, bundle t-app, cluster c1: helm.valuesFrom: secretKeyRef kube-system/admin key values.yaml reads Secret admin in namespace kube-system, " +
        "outside this GitRepo's namespaces: it is not read. valuesFrom reads only the deployment's namespace app; the stack setting gitRepos[t].allowedTargetNamespaces widens that " +
        "(it also lets the GitRepo's objects into those namespaces)",
    );
    expect(valuesFromProblem([ref("Secret", "kube-system", "admin")], { namespace: "app", allowed: ["kube-*"] }, where)).to.equal(undefined);
    // Another GitRepo's namespace is not read, even as the deployment's own.
    const foreign = (ns: string) => (ns === "victim" ? ["victim-repo"] : undefined);
    expect(valuesFromProblem([ref("Secret", "victim", "db")], { namespace: "victim", foreign }, where)?.reason).to.match(
      /reads Secret db in namespace victim, which is GitRepo victim-repo's/,
    );
    expect(valuesFromProblem([ref("ConfigMap", "app", "")], scope, where)?.reason).to.equal(
      "configMapKeyRef app/ key values.yaml: resource name may not be empty",
    );
    const many = Array.from({ length: 4 }, (_, i) => ref("ConfigMap", "app", `cm${i}`));
    expect(valuesFromProblem(many, scope, where, 3)?.reason).to.equal("4 references, over the limit of 3 per bundle deployment (PULUMI_FLEET_MAX_VALUES_FROM)");
    expect(valuesFromProblem(many, scope, where, 4)).to.equal(undefined);
    // The operator's bound, never content's: a value that is not a positive number is an error naming it.
    expect(maxValuesFrom({})).to.equal(32);
    expect(maxValuesFrom({ PULUMI_FLEET_MAX_VALUES_FROM: "3" })).to.equal(3);
    expect(() => maxValuesFrom({ PULUMI_FLEET_MAX_VALUES_FROM: "none" })).to.throw(/PULUMI_FLEET_MAX_VALUES_FROM="none": expected a positive number/);
  });

  it("a missing object or key, or a refused read, fails in Fleet's words", () => {
    const refs = [ref("ConfigMap", "app", "cm", "k"), ref("Secret", "app", "s")];
    const fail = (objects: Parameters<typeof answers>[0]) => (resolveValuesFrom(refs, answers(objects), where) as FleetError).message;
    expect(fail({})).to.equal('gitRepo t, bundle t-app, cluster c1: helm.valuesFrom: configMapKeyRef app/cm key k: configmaps "cm" not found');
    expect(fail({ "ConfigMap app/cm": cm("cm", { other: "x" }) })).to.equal(
      "gitRepo t, bundle t-app, cluster c1: helm.valuesFrom: key k is missing from configmap app/cm, can't use it in valuesFrom",
    );
    // Fleet reads data, not binaryData.
    expect(fail({ "ConfigMap app/cm": cm("cm", {}, { binaryData: { k: b64("a: 1") } }) })).to.contain("key k is missing from configmap app/cm");
    expect(fail({ "ConfigMap app/cm": cm("cm", { k: "a: 1" }) })).to.contain('secretKeyRef app/s key values.yaml: secrets "s" not found');
    expect(fail({ "ConfigMap app/cm": cm("cm", { k: "a: 1" }), "Secret app/s": secret("s", { other: "x" }) })).to.contain(
      "key values.yaml is missing from secret app/s, can't use it in valuesFrom",
    );
    expect(fail({ "ConfigMap app/cm": { error: 'configmaps "cm" is forbidden: User "system:serviceaccount:x:y" cannot get resource' } })).to.contain(
      'configMapKeyRef app/cm key k: configmaps "cm" is forbidden: User "system:serviceaccount:x:y"',
    );
  });

  it("the inputs in order; the digest changes with a value and only then; a Secret makes the deployment secret and gives what to redact", () => {
    const refs = [ref("ConfigMap", "app", "cm"), ref("Secret", "app", "s")];
    const read = (cmValue: string, secretValue: string, uid = "u1") =>
      resolveValuesFrom(
        refs,
        answers({ "ConfigMap app/cm": cm("cm", { "values.yaml": cmValue, unrelated: "x" }), "Secret app/s": secret("s", { "values.yaml": secretValue }, uid) }),
        where,
      );
    const r = read("replicas: 2\n", "db:\n  password: hunter2-long\n");
    if (r instanceof FleetError) throw r;
    expect(r.inputs).to.deep.equal([
      { from: "configMapKeyRef app/cm key values.yaml", data: b64("replicas: 2\n") },
      { from: "secretKeyRef app/s key values.yaml", data: b64("db:\n  password: hunter2-long\n") },
    ]);
    expect(r.secret).to.equal(true);
    expect(r.redact).to.include("hunter2-long").and.include("db:\n  password: hunter2-long\n").and.include(b64("db:\n  password: hunter2-long\n"));
    expect(r.redact).to.not.include("password");
    const digest = (x: ReturnType<typeof read>) => (x as { digest: string }).digest;
    expect(digest(read("replicas: 2\n", "db:\n  password: hunter2-long\n"))).to.equal(r.digest);
    expect(digest(read("replicas: 3\n", "db:\n  password: hunter2-long\n"))).to.not.equal(r.digest);
    expect(digest(read("replicas: 2\n", "db:\n  password: other\n"))).to.not.equal(r.digest);
    // Keyed by the Secret's uid (never in the state): the same value in a new object is a new digest.
    expect(digest(read("replicas: 2\n", "db:\n  password: hunter2-long\n", "u2"))).to.not.equal(r.digest);
    // A ConfigMap alone is no secret.
    const plain = resolveValuesFrom([refs[0]], answers({ "ConfigMap app/cm": cm("cm", { "values.yaml": "a: 1" }) }), where);
    expect(plain).to.include({ secret: false }).and.have.property("redact").that.deep.equals([]);
  });

  it("the deploymentID keeps Fleet's form, manifestID:hash, the hash also over the values read", () => {
    const id = withValuesDigest("s-abc:1234", "d1");
    expect(id).to.match(/^s-abc:[0-9a-f]{64}$/);
    expect(withValuesDigest("s-abc:1234", "d2")).to.not.equal(id);
  });
});

describe("helm.valuesFrom in the desired state (fake facts)", function () {
  this.timeout(60_000);
  const cacheRoot = tempDir("pf-cache-");
  const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n";
  const caps = { kubeVersion: { version: "v1.36.3", major: "1", minor: "36" }, apiVersions: ["v1"] };
  const CHART = {
    "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    "app/values.yaml": "a: chart\nb: chart\nc: chart\nd: chart\ne: chart\n",
    "app/prod.yaml": "b: file\nc: file\n",
    "app/templates/cm.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: out\ndata:\n" +
      '{{- range $k := list "a" "b" "c" "d" "e" }}\n  {{ $k }}: {{ index $.Values $k | quote }}\n{{- end }}\n',
    "app/fleet.yaml":
      "namespace: app\nserviceAccount: deployer\nhelm:\n  chart: .\n  values: {a: values, b: values, c: values, d: values}\n  valuesFiles: [prod.yaml]\n" +
      "  valuesFrom:\n  - configMapKeyRef: {name: settings}\n    secretKeyRef: {name: creds, key: extra.yaml}\n" +
      "targetCustomizations:\n- name: two\n  clusterName: c2\n  helm:\n    valuesFrom:\n    - configMapKeyRef: {name: c2-only}\n",
  };
  const config = (repo: string, over: Partial<StackConfig> = {}): StackConfig => ({
    file: "stacks/Pulumi.test.yaml",
    fleetVersion: "0.13.1",
    agent: { apiServerURL: "https://fleet.example.com" },
    clusterGroups: [],
    clusters: ["c1", "c2"].map((name) => ({ name, labels: {}, annotations: {}, templateValues: {}, deleteUnreachable: false, kubeconfig: KUBECONFIG })),
    gitRepos: [gitRepoConfig({ name: "t", repo, paths: ["app"], targets: [{ clusterSelector: {} }] })],
    ...over,
  });
  const cluster = (c: "c1" | "c2", settings = "c: configmap\nd: configmap\n", password = "pw-from-the-cluster") => ({
    [`ConfigMap app/settings`]: cm("settings", { "values.yaml": settings }),
    [`Secret app/creds`]: secret("creds", { "extra.yaml": `d: secret\npassword: ${password}\n` }),
    ...(c === "c2" ? { "ConfigMap app/c2-only": cm("c2-only", { "values.yaml": "e: c2-only\n" }) } : {}),
  });
  const facts = (byCluster: Record<string, Record<string, Record<string, unknown>>>, asked: LookupJob[] = []) =>
    fakeFacts({
      objects: nothingExists,
      discovery: discovered(caps),
      impersonate: (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { kubeconfig: `kubeconfig of ${j.id}` }])),
      lookup: (jobs) => {
        asked.push(...jobs);
        return Object.fromEntries(jobs.map((j) => [j.id, { answers: j.keys.map(answers(byCluster[j.id.split(" ")[0]])) }]));
      },
    });
  const d = (s: DesiredState, cluster: string) => s.deployments.find((x) => x.key === `${cluster}/t/t-app`);
  const dataOf = (s: DesiredState, cluster: string) => d(s, cluster)!.objects.find((o) => o.manifest.kind === "ConfigMap")!.manifest.data;

  it("renders values, then valuesFiles, then valuesFrom (configMapKeyRef, then secretKeyRef), per targetCustomization, read as the deploying identity", async () => {
    const repo = new TestRepo(CHART);
    const asked: LookupJob[] = [];
    const s = await desiredState(config(repo.url()), facts({ c1: cluster("c1"), c2: cluster("c2") }, asked), { cacheRoot });
    expect(s.failures).to.deep.equal([]);
    expect(dataOf(s, "c1")).to.deep.equal({ a: "values", b: "file", c: "configmap", d: "secret", e: "chart" });
    expect(dataOf(s, "c2")).to.deep.equal({ a: "values", b: "file", c: "configmap", d: "secret", e: "c2-only" });
    expect(asked.map((j) => [j.id, j.kubeconfig, j.keys.map((k) => `${k.kind} ${k.namespace}/${k.name}`)])).to.deep.equal([
      [
        "c1 system:serviceaccount:cattle-fleet-system:deployer\u0000t",
        "kubeconfig of c1 system:serviceaccount:cattle-fleet-system:deployer",
        ["ConfigMap app/settings", "Secret app/creds"],
      ],
      [
        "c2 system:serviceaccount:cattle-fleet-system:deployer\u0000t",
        "kubeconfig of c2 system:serviceaccount:cattle-fleet-system:deployer",
        ["ConfigMap app/settings", "Secret app/creds", "ConfigMap app/c2-only"],
      ],
    ]);
    // Read from a Secret: the deployment is a secret.
    expect(d(s, "c1")!.secret).to.equal(true);
  });

  it("a changed value is a new deploymentID, an unchanged one the same; each cluster's own", async () => {
    const repo = new TestRepo(CHART);
    const id = async (c1: Record<string, Record<string, unknown>>) => {
      const s = await desiredState(config(repo.url()), facts({ c1, c2: cluster("c2") }), { cacheRoot });
      return [d(s, "c1")!.record.deploymentId, d(s, "c2")!.record.deploymentId];
    };
    const [first, c2] = await id(cluster("c1"));
    expect(await id(cluster("c1"))).to.deep.equal([first, c2]);
    const [changed, c2again] = await id(cluster("c1", "c: changed\n"));
    expect(changed).to.not.equal(first);
    expect(c2again).to.equal(c2);
    expect((await id(cluster("c1", undefined, "rotated")))[0]).to.not.equal(first);
  });

  it("the digest is in the deployed entry's deploymentID only: the plan handed to onPlanned keeps the planned one", async () => {
    const repo = new TestRepo(CHART);
    let planned: FleetState | undefined;
    const s = await desiredState(config(repo.url()), facts({ c1: cluster("c1"), c2: cluster("c2") }), {
      cacheRoot,
      onPlanned: (p) => {
        planned = p;
      },
    });
    const before = planned!.plan.entries.find((e) => e.cluster === "c1")!;
    const after = s.fleet.plan.entries.find((e) => e.cluster === "c1")!;
    expect(after.deploymentId).to.equal(d(s, "c1")!.record.deploymentId);
    expect(before.deploymentId).to.not.equal(after.deploymentId);
    expect(after.deploymentId.startsWith(before.deploymentId.split(":")[0] + ":")).to.equal(true);
  });

  it("a missing key fails that pair alone in Fleet's words, its Secret's values never in the failure; the other cluster deploys", async () => {
    const repo = new TestRepo(CHART);
    const broken = { ...cluster("c1"), "ConfigMap app/settings": cm("settings", { "other.yaml": "x: 1" }) };
    const s = await desiredState(config(repo.url()), facts({ c1: broken, c2: cluster("c2") }), { cacheRoot });
    expect(s.failures.map((f) => f.message)).to.deep.equal([
      "app/fleet.yaml gitRepo t, bundle t-app, cluster c1: helm.valuesFrom: key values.yaml is missing from configmap app/settings, can't use it in valuesFrom",
    ]);
    expect(d(s, "c1")).to.equal(undefined);
    expect(dataOf(s, "c2")).to.include({ d: "secret" });
    // A value the chart cannot use fails in the decoder's words; the Secret's values are [secret] in it.
    const chart = new TestRepo({
      ...CHART,
      "app/templates/fail.yaml": '{{- if .Values.password }}{{ fail (printf "bad password %s" .Values.password) }}{{ end }}\n',
    });
    const f = await desiredState(config(chart.url()), facts({ c1: cluster("c1"), c2: cluster("c2") }), { cacheRoot });
    expect(f.failures.map((x) => x.message).join("\n"))
      .to.contain("bad password [secret]")
      .and.not.contain("pw-from-the-cluster");
  });

  it("out of the GitRepo's namespaces: fails unread; in render mode nothing is read and the deployment says so", async () => {
    const repo = new TestRepo({
      ...CHART,
      "app/fleet.yaml": "namespace: app\nhelm:\n  valuesFrom:\n  - secretKeyRef: {name: admin, namespace: kube-system}\n",
    });
    const asked: LookupJob[] = [];
    const s = await desiredState(config(repo.url()), facts({ c1: {}, c2: {} }, asked), { cacheRoot });
    expect(s.failures.map((f) => [f.cluster, f.field])).to.deep.equal([
      ["c1", "helm.valuesFrom"],
      ["c2", "helm.valuesFrom"],
    ]);
    expect(s.failures[0].reason).to.match(
      /^secretKeyRef kube-system\/admin key values\.yaml reads Secret admin in namespace kube-system, outside .*gitRepos\[t\]\.allowedTargetNamespaces/,
    );
    expect(asked).to.deep.equal([]);
    const rendered = await desiredState({ ...config(repo.url()), renderDir: "/tmp/pulumi-fleet-render" }, fakeFacts(), { cacheRoot });
    expect(rendered.failures).to.deep.equal([]);
    expect(d(rendered, "c1")!.warnings.join("\n")).to.contain("helm.valuesFrom is not read in render mode (as `fleet test` does not read it)");
  });
});
