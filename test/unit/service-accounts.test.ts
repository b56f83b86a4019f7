import { expect } from "chai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { accountUsers, defaultAccountClusters, impersonationRefused, wantedUsers } from "../../core/desired/service-accounts";
import { KnownClusters } from "../../core/desired/cluster-facts";
import { Facts } from "../../core/desired/facts";
import { gatherDefaultAccounts, gatherKubeconfigs } from "../../core/desired/gather";
import { PlanEntry } from "../../core/targeting/plan";
import { ClusterConfig } from "../../core/config/stack";
import { ImpersonateJob, ImpersonateResult, OwnersJob, OwnersResult } from "../../core/model/renderer-protocol";
import { impersonate } from "../../core/desired/facts";
import { rejectionOf } from "../support/rejection";
import { planEntry } from "../support/plan-entries";

const entry = (bundle: string, cluster: string, serviceAccount?: string): PlanEntry =>
  planEntry(bundle, cluster, { options: serviceAccount ? { serviceAccount } : {}, deploymentId: `s-1:${bundle}` });

// Two contexts: the one named for the cluster must be the one impersonated, and the other left out.
const KUBECONFIG = `apiVersion: v1
kind: Config
current-context: other
clusters:
- {name: a, cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: ${Buffer.from("CA").toString("base64")}}}
- {name: b, cluster: {server: "https://10.0.0.2:6443"}}
users:
- {name: admin, user: {token: secret-token}}
- {name: other, user: {token: other-token}}
contexts:
- {name: ctx-a, context: {cluster: a, user: admin}}
- {name: other, context: {cluster: b, user: other}}
`;
const cluster = (name: string, over: Partial<ClusterConfig> = {}): ClusterConfig => ({
  name,
  labels: {},
  annotations: {},
  templateValues: {},
  deleteUnreachable: false,
  kubeconfig: KUBECONFIG,
  context: "ctx-a",
  ...over,
});

/**
 * As the desired state does it: whether fleet-default exists gathered (core/desired/gather.ts), who applies
 * what decided, then the impersonating kubeconfigs gathered; `kubeconfigs` holds the clusters that have any.
 */
async function accountProviders(
  entries: PlanEntry[],
  clusters: ClusterConfig[],
  agentNamespace: (cluster: string) => string,
  renderMode: boolean,
  live: {
    skip?: ReadonlySet<string>;
    read: (jobs: OwnersJob[]) => Promise<Record<string, OwnersResult>>;
    impersonate: (jobs: ImpersonateJob[]) => Promise<Record<string, ImpersonateResult>>;
  },
) {
  const facts = { objects: live.read, impersonate: live.impersonate } as Partial<Facts> as Facts;
  const known: KnownClusters = new Map();
  await gatherDefaultAccounts(defaultAccountClusters(entries, renderMode, live.skip), clusters, agentNamespace, facts, known);
  const users = accountUsers(entries, agentNamespace, renderMode, known);
  await gatherKubeconfigs(wantedUsers(entries, users), clusters, facts, known, impersonationRefused);
  return { ...users, kubeconfigs: new Map([...known].filter(([, f]) => f.kubeconfigs.size).map(([c, f]) => [c, f.kubeconfigs])) };
}

const noDefaultAccount = async (jobs: OwnersJob[]) => Object.fromEntries(jobs.map((j) => [j.id, { objects: [null] }]));

describe("serviceAccount: kubeconfigs acting as the account", () => {
  it("one kubeconfig per (cluster, account): the cluster's context only, its user acting as system:serviceaccount:<agent namespace>:<name>", async () => {
    const entries = [entry("web", "c1", "deployer"), entry("db", "c1", "deployer"), entry("cache", "c1"), entry("web", "c2", "deployer")];
    const r = await accountProviders(entries, [cluster("c1"), cluster("c2")], (c) => (c === "c1" ? "cattle-fleet-system" : "agents"), false, {
      read: noDefaultAccount,
      impersonate,
    });
    expect(entries.map((e) => r.userOf.get(e))).to.deep.equal([
      "system:serviceaccount:cattle-fleet-system:deployer",
      "system:serviceaccount:cattle-fleet-system:deployer",
      undefined,
      "system:serviceaccount:agents:deployer",
    ]);
    expect([...r.kubeconfigs.get("c1")!.keys()]).to.deep.equal(["system:serviceaccount:cattle-fleet-system:deployer"]);
    const doc = YAML.parse(r.kubeconfigs.get("c1")!.get("system:serviceaccount:cattle-fleet-system:deployer")!);
    expect(doc["current-context"]).to.equal("ctx-a");
    expect(doc.contexts.map((c: { name: string }) => c.name)).to.deep.equal(["ctx-a"]);
    expect(doc.clusters).to.have.length(1);
    expect(doc.clusters[0].cluster.server).to.equal("https://10.0.0.1:6443");
    expect(doc.users).to.deep.equal([{ name: "admin", user: { token: "secret-token", as: "system:serviceaccount:cattle-fleet-system:deployer" } }]);
  });

  it("nothing in render mode or without serviceAccount; an unusable kubeconfig names the bundle, cluster and field", async () => {
    expect(
      (await accountProviders([entry("web", "c1", "deployer")], [cluster("c1")], () => "ns", true, { read: noDefaultAccount, impersonate })).kubeconfigs.size,
    ).to.equal(0);
    expect(
      (await accountProviders([entry("web", "c1")], [cluster("c1")], () => "ns", false, { read: noDefaultAccount, impersonate })).kubeconfigs.size,
    ).to.equal(0);
    expect(
      await rejectionOf(
        accountProviders([entry("web", "c1", "deployer")], [cluster("c1", { context: "missing" })], () => "ns", false, { read: noDefaultAccount, impersonate }),
      ),
    ).to.match(
      /gitRepo repo, bundle web, cluster c1: serviceAccount: cannot make a kubeconfig acting as system:serviceaccount:ns:deployer: loading the kubeconfig: .*missing/,
    );
  });

  it("without serviceAccount: fleet-default when it exists in the agent namespace (Fleet's fallback), read once per cluster; left-out clusters are not read", async () => {
    const asked: OwnersJob[] = [];
    const read = async (jobs: OwnersJob[]) => {
      asked.push(...jobs);
      return Object.fromEntries(jobs.map((j) => [j.id, { objects: [j.id === "c1" ? {} : null] }]));
    };
    const entries = [entry("web", "c1"), entry("db", "c1"), entry("web", "c2"), entry("pinned", "c1", "deployer"), entry("web", "c3")];
    const r = await accountProviders(entries, [cluster("c1"), cluster("c2"), cluster("c3")], () => "cattle-fleet-system", false, {
      read,
      impersonate,
      skip: new Set(["c3"]),
    });
    expect(asked.map((j) => [j.id, j.objects])).to.deep.equal([
      ["c1", [{ apiVersion: "v1", kind: "ServiceAccount", namespace: "cattle-fleet-system", name: "fleet-default" }]],
      ["c2", [{ apiVersion: "v1", kind: "ServiceAccount", namespace: "cattle-fleet-system", name: "fleet-default" }]],
    ]);
    expect(entries.map((e) => r.userOf.get(e))).to.deep.equal([
      "system:serviceaccount:cattle-fleet-system:fleet-default",
      "system:serviceaccount:cattle-fleet-system:fleet-default",
      undefined,
      "system:serviceaccount:cattle-fleet-system:deployer",
      undefined,
    ]);
    // An unreadable cluster (unreachable) does not stop a preview: its bundles say how they are applied.
    const unread = await accountProviders([entry("web", "c1")], [cluster("c1")], () => "ns", false, {
      read: async () => ({ c1: { error: "connection refused" } }),
      impersonate,
    });
    expect(unread.userOf.size).to.equal(0);
    expect(unread.unread.get("c1")).to.equal(
      "could not tell whether ns/fleet-default exists (connection refused): applied with the stack's credentials, as when it does not (Fleet would apply as that account if it exists)",
    );
  });

  it("a kubeconfig given as a path: relative certificate paths resolve against its directory, and are inlined", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pf-kubeconfig-"));
    fs.writeFileSync(path.join(dir, "ca.crt"), "THE-CA");
    fs.writeFileSync(path.join(dir, "config"), KUBECONFIG.replace(/certificate-authority-data: [^,}\s]+/, "certificate-authority: ca.crt"));
    const r = await accountProviders([entry("web", "c1", "deployer")], [cluster("c1", { kubeconfig: path.join(dir, "config") })], () => "ns", false, {
      read: noDefaultAccount,
      impersonate,
    });
    const doc = YAML.parse(r.kubeconfigs.get("c1")!.get("system:serviceaccount:ns:deployer")!);
    expect(Buffer.from(doc.clusters[0].cluster["certificate-authority-data"], "base64").toString()).to.equal("THE-CA");
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
