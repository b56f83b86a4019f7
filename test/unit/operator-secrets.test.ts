/**
 * Secrets from the operator to the clusters (gitRepos[].downstreamResources): the stack file's rules
 * (core/config/downstream-resources.ts) and the decision of what each cluster's setup holds
 * (core/desired/operator-secrets.ts, through desiredState with fake facts).
 */
import { expect } from "chai";
import { parseFleetYaml } from "../../core/bundles/fleetyaml";
import { parseStackConfig } from "../../core/config/stack";
import { desiredState } from "../../core/desired/state";
import { DesiredState } from "../../core/desired/types";
import { fakeFacts } from "../support/fake-facts";
import { CONFIGMAP, tempDir, TestRepo } from "../support/git-fixtures";

const FILE = "stacks/Pulumi.test.yaml";
const CANARY = "op-secret-canary-7f3a";
const parse = (raw: Record<string, unknown>) => parseStackConfig(raw, FILE, "/project");
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected an error");
};
const repo = (over: Record<string, unknown>) => ({ name: "a", repo: "https://example.com/a.git", ...over });
const secret = (over: Record<string, unknown> = {}) => ({ kind: "Secret", name: "db", stringData: { password: CANARY }, ...over });

describe("operator secrets: the stack file's downstreamResources (core/config/downstream-resources.ts)", () => {
  it("lands in the GitRepo's targetNamespace by default; stringData is encoded, data kept; both keys listed", () => {
    const [s] = parse({
      gitRepos: [repo({ targetNamespace: "team-a", downstreamResources: [secret({ data: { "tls.key": Buffer.from("k").toString("base64") } })] })],
    }).gitRepos[0].downstreamResources!;
    expect(s).to.deep.equal({
      name: "db",
      namespace: "team-a",
      type: "Opaque",
      labels: {},
      annotations: {},
      keys: ["password", "tls.key"],
      data: { password: Buffer.from(CANARY).toString("base64"), "tls.key": "aw==" },
    });
  });

  it("a value still encrypted (the stack file read without the engine) is unknown, its key kept", () => {
    const [s] = parse({ gitRepos: [repo({ targetNamespace: "team-a", downstreamResources: [secret({ stringData: { password: { secure: "v1:abc" } } })] })] })
      .gitRepos[0].downstreamResources!;
    expect([s.data, s.keys]).to.deep.equal([{}, ["password"]]);
  });

  it("refuses, naming the field: no namespace, a namespace outside the GitRepo's, a ConfigMap, bad keys and values, a type's missing key, duplicates", () => {
    const err = (r: Record<string, unknown>) => errorOf(() => parse({ gitRepos: [repo(r)] }));
    expect(err({ downstreamResources: [secret()] })).to.equal(
      `${FILE}: gitRepos[0].downstreamResources[0].namespace: is required when the GitRepo has no targetNamespace: the namespace this Secret lands in on each cluster the GitRepo targets`,
    );
    expect(err({ targetNamespace: "team-a", downstreamResources: [secret({ namespace: "kube-system" })] })).to.contain(
      'gitRepos[0].downstreamResources[0].namespace: "kube-system" is not this GitRepo\'s targetNamespace "team-a"',
    );
    expect(err({ allowedTargetNamespaces: ["team-a-*"], downstreamResources: [secret({ namespace: "team-b" })] })).to.contain(
      'gitRepos[0].downstreamResources[0].namespace: "team-b" is not in this GitRepo\'s allowedTargetNamespaces (team-a-*)',
    );
    expect(
      parse({ gitRepos: [repo({ allowedTargetNamespaces: ["team-a-*"], downstreamResources: [secret({ namespace: "team-a-db" })] })] }).gitRepos[0]
        .downstreamResources![0].namespace,
    ).to.equal("team-a-db");
    expect(err({ targetNamespace: "t", downstreamResources: [secret({ kind: "ConfigMap" })] })).to.contain(
      "downstreamResources[0].kind: ConfigMap is not offered here",
    );
    expect(err({ targetNamespace: "t", downstreamResources: [secret({ stringData: { "a/b": "x" } })] })).to.contain(
      "downstreamResources[0].stringData.a/b: invalid key",
    );
    expect(err({ targetNamespace: "t", downstreamResources: [secret({ data: { k: "not base64!" } })] })).to.contain(
      "downstreamResources[0].data.k: is not base64",
    );
    expect(err({ targetNamespace: "t", downstreamResources: [secret({ data: { password: "eA==" } })] })).to.contain(
      "downstreamResources[0].stringData.password: is set in both data and stringData",
    );
    expect(err({ targetNamespace: "t", downstreamResources: [secret({ stringData: { password: 5 } })] })).to.contain(
      "stringData.password: must be a string: set it with `pulumi config set --secret",
    );
    expect(err({ targetNamespace: "t", downstreamResources: [secret({ type: "kubernetes.io/dockerconfigjson" })] })).to.contain(
      "downstreamResources[0]: a Secret of type kubernetes.io/dockerconfigjson needs the key .dockerconfigjson",
    );
    expect(err({ targetNamespace: "t", downstreamResources: [secret(), secret({ kind: "secret" })] })).to.contain(
      "downstreamResources[1]: Secret t/db is also at index 0",
    );
  });

  it("never lands in another GitRepo's namespace: its targetNamespace, its allowedTargetNamespaces, or its own Secrets' namespace", () => {
    const err = (other: Record<string, unknown>) =>
      errorOf(() =>
        parse({ gitRepos: [repo({ targetNamespace: "team-a", downstreamResources: [secret()] }), { name: "b", repo: "https://example.com/b.git", ...other }] }),
      );
    expect(err({ targetNamespace: "team-a" })).to.equal(
      `${FILE}: gitRepos[0].downstreamResources[0].namespace: "team-a" is GitRepo b's namespace (its targetNamespace): ` +
        "this GitRepo's Secrets would be readable by that GitRepo's content; give each GitRepo a namespace of its own",
    );
    expect(err({ allowedTargetNamespaces: ["team-*"] })).to.contain('"team-a" is GitRepo b\'s namespace (its allowedTargetNamespaces (team-*))');
    expect(err({ downstreamResources: [secret({ name: "other", namespace: "team-a" })] })).to.contain(
      '"team-a" is GitRepo b\'s namespace (its own downstreamResources land there)',
    );
    expect(
      parse({
        gitRepos: [
          repo({ targetNamespace: "team-a", downstreamResources: [secret()] }),
          { name: "b", repo: "https://example.com/b.git", targetNamespace: "team-b" },
        ],
      }).gitRepos,
    ).to.have.length(2);
  });
});

describe("operator secrets: fleet.yaml downstreamResources", () => {
  it("is refused, top level and per target, naming the stack setting: content never names the operator's Secrets, and it is never ignored", () => {
    expect(() => parseFleetYaml({ downstreamResources: [{ kind: "Secret", name: "db" }] }, "app/fleet.yaml")).to.throw(
      "app/fleet.yaml: downstreamResources: content cannot name the operator's Secrets here: the stack file hands them to the GitRepo's clusters (gitRepos[].downstreamResources",
    );
    expect(() =>
      parseFleetYaml({ targetCustomizations: [{ name: "prod", clusterName: "p", downstreamResources: [{ kind: "Secret", name: "db" }] }] }, "app/fleet.yaml"),
    ).to.throw("targetCustomizations[0].downstreamResources: content cannot name the operator's Secrets");
  });
});

describe("operator secrets: what each cluster's setup holds (core/desired/operator-secrets.ts)", function () {
  this.timeout(30_000);
  const cacheRoot = tempDir("pf-cache-");
  const content = new TestRepo({ "app/cm.yaml": CONFIGMAP("app") });
  const config = (a: Record<string, unknown> = {}, extra: Record<string, unknown>[] = []) =>
    parse({
      renderDir: "/tmp/pf-render-opsecrets",
      agent: { enabled: false },
      clusters: [
        { name: "prod-1", labels: { env: "prod" } },
        { name: "dev-1", labels: { env: "dev" } },
      ],
      gitRepos: [
        {
          name: "a",
          repo: content.url(),
          paths: ["app"],
          targetNamespace: "team-a",
          targets: [{ clusterSelector: { matchLabels: { env: "prod" } } }],
          downstreamResources: [secret()],
          ...a,
        },
        { name: "b", repo: content.url(), paths: ["app"], targetNamespace: "team-b", targets: [{ clusterSelector: {} }] },
        ...extra,
      ],
    });
  const setupOf = (s: DesiredState, cluster: string) => s.clusters.find((c) => c.name === cluster)!.setup;
  const after = (s: DesiredState) => s.deployments.filter((d) => d.afterOperatorSecrets).map((d) => d.key);

  it("on the clusters the GitRepo targets only, as a secret object of the setup with its namespace; its bundles there come after the setup", async () => {
    const s = await desiredState(config(), fakeFacts(), { cacheRoot });
    const prod = setupOf(s, "prod-1")!;
    expect(prod.secretObjects!["/Secret/team-a/db"].manifest).to.deep.equal({
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      data: { password: Buffer.from(CANARY).toString("base64") },
      metadata: {
        name: "db",
        namespace: "team-a",
        labels: { "fleet.cattle.io/cluster": "prod-1", "app.kubernetes.io/managed-by": "pulumi-fleet" },
        annotations: { "pulumi-fleet.io/downstream-resource-of": "a" },
      },
    });
    expect(prod.objects["/Namespace//team-a"], "the cluster creates the namespace in the same set").to.not.equal(undefined);
    expect(setupOf(s, "dev-1")?.secretObjects, "dev-1 is not targeted").to.equal(undefined);
    expect(after(s)).to.deep.equal(["prod-1/a/a-app"]);
    // Nothing but the secret objects holds the value, not even hashed into the deploymentID kept in clear.
    const clear = JSON.stringify({ ...s, fleet: undefined, clusters: s.clusters.map((c) => ({ ...c, setup: { ...c.setup, secretObjects: undefined } })) });
    expect(clear).to.not.include(CANARY).and.not.include(Buffer.from(CANARY).toString("base64"));
  });

  it("a changed value changes the secret objects, never the deploymentID; a new Secret changes both; a namespace no bundle needs is created and kept", async () => {
    const one = setupOf(await desiredState(config(), fakeFacts(), { cacheRoot }), "prod-1")!;
    const changed = setupOf(
      await desiredState(config({ downstreamResources: [secret({ stringData: { password: "another-value" } })] }), fakeFacts(), { cacheRoot }),
      "prod-1",
    )!;
    expect(changed.deploymentId).to.equal(one.deploymentId);
    expect(changed.secretObjects).to.not.deep.equal(one.secretObjects);
    const more = setupOf(
      await desiredState(
        config({ allowedTargetNamespaces: ["team-a", "team-a-db"], downstreamResources: [secret(), secret({ namespace: "team-a-db" })] }),
        fakeFacts(),
        { cacheRoot },
      ),
      "prod-1",
    )!;
    expect(more.deploymentId).to.not.equal(one.deploymentId);
    expect(more.objects["/Namespace//team-a-db"].retain).to.be.a("string");
  });

  it("dropping the entry, or the cluster from the GitRepo's targets, leaves the setup without the Secret (the set prunes it)", async () => {
    const gone = await desiredState(config({ downstreamResources: undefined }), fakeFacts(), { cacheRoot });
    expect(setupOf(gone, "prod-1")?.secretObjects).to.equal(undefined);
    const moved = await desiredState(config({ targets: [{ clusterSelector: { matchLabels: { env: "dev" } } }] }), fakeFacts(), { cacheRoot });
    expect(setupOf(moved, "prod-1")?.secretObjects).to.equal(undefined);
    expect(Object.keys(setupOf(moved, "dev-1")!.secretObjects!)).to.deep.equal(["/Secret/team-a/db"]);
  });

  it("a bundle declaring the operator's Secret, or the Namespace it lands in, fails alone; the agent's namespace is refused", async () => {
    const squat = new TestRepo({
      "secret/s.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: team-a\nstringData:\n  password: mine\n",
      "ns/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
    });
    const s = await desiredState(config({}, [{ name: "c", repo: squat.url(), paths: ["secret", "ns"], targets: [{ clusterSelector: {} }] }]), fakeFacts(), {
      cacheRoot,
    });
    expect(s.failures.map((f) => [f.bundle, f.cluster])).to.deep.equal([
      ["c-ns", "prod-1"],
      ["c-secret", "prod-1"],
    ]);
    expect(s.failures[1].message).to.contain(
      "declares Secret team-a/db, which the stack's gitRepos[0].downstreamResources[0] puts GitRepo a's Secret on this cluster",
    );
    expect(s.deployments.map((d) => d.key)).to.include.members(["dev-1/c/c-secret", "dev-1/c/c-ns", "prod-1/a/a-app"]);
    const agentOn = parse({
      renderDir: "/tmp/pf-render-opsecrets",
      fleetVersion: "0.13.1",
      agent: { apiServerURL: "https://fleet.example.com" },
      clusters: [{ name: "prod-1" }],
      gitRepos: [
        {
          name: "a",
          repo: content.url(),
          paths: ["app"],
          targets: [{ clusterName: "prod-1" }],
          allowedTargetNamespaces: ["cattle-*"],
          downstreamResources: [secret({ namespace: "cattle-fleet-system" })],
        },
      ],
    });
    const message = await desiredState(agentOn, fakeFacts(), { cacheRoot }).then(
      () => "",
      (e: Error) => e.message,
    );
    expect(message).to.contain('gitRepos[0].downstreamResources[0].namespace: "cattle-fleet-system" is the namespace of cluster prod-1\'s agent');
  });
});
