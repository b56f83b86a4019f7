/**
 * Issue 41 on a live cluster: a GitRepo whose stack entry deploys as a restricted service account
 * cannot escalate through its content. A targetCustomization naming the agent's own account
 * (fleet-agent, bound to a ClusterRole of every verb) fails that bundle, naming the fleet.yaml field
 * and the stack setting that would allow it; its ClusterRoleBinding is never created; another GitRepo's
 * bundle deploys in the same `up` (core/desired/reach.ts).
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { CONFIGMAP, gitRepoConfig } from "../support/git-fixtures";
import { failureOf, liveStack } from "../support/live-stack";
import { configMapsOnlyAccount } from "../support/restricted-account";

// The agent's namespace (where Fleet looks accounts up), and where both GitRepos deploy.
const NS = "reach-test";
const CRB = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/reach-escalated";
const ESCALATION =
  "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: reach-escalated\n" +
  `roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: default, namespace: ${NS}}]\n`;

describe("content cannot widen its GitRepo's identity on a live cluster (issue 41)", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("reach", {
    namespace: NS,
    paths: ["app"],
    agent: { namespace: NS },
    gitRepo: { serviceAccount: "restricted" },
    files: {
      "app/cm.yaml": CONFIGMAP("app"),
      "app/fleet.yaml": `defaultNamespace: ${NS}\n`,
      "other/cm.yaml": CONFIGMAP("other"),
      "other/fleet.yaml": `defaultNamespace: ${NS}\n`,
    },
    // The stack's account for the GitRepo: ConfigMaps in its namespace, nothing else.
    setup: async ({ cluster }) => {
      await configMapsOnlyAccount(cluster, NS, "restricted");
    },
  });
  /** The stack with a second GitRepo, `reach-other`, from the same directory. */
  const options = () => {
    const o = s.options();
    return {
      ...o,
      config: {
        ...o.config!,
        gitRepos: [...o.config!.gitRepos, gitRepoConfig({ name: "reach-other", repo: s.repoDir, paths: ["other"], targets: [{ clusterSelector: {} }] })],
      },
    };
  };

  after(async function () {
    if (await kubeGet(s.cluster, CRB)) await kubeRequest(s.cluster, "DELETE", CRB);
  });

  it("a targetCustomization's serviceAccount fleet-agent fails that bundle alone: no ClusterRoleBinding, the other GitRepo deploys", async () => {
    // First the agent (and its fleet-agent account) and both bundles, as the restricted account and the stack's.
    const first = await ops.up(options());
    expect(first.events.map((e) => `${e.event} ${e.bundle}`).sort()).to.deep.equal(["deployed reach-app", "deployed reach-other-other"]);
    s.write("app/fleet.yaml", `defaultNamespace: ${NS}\ntargetCustomizations:\n  - name: all\n    clusterSelector: {}\n    serviceAccount: fleet-agent\n`);
    s.write("app/crb.yaml", ESCALATION);
    s.write("other/cm.yaml", CONFIGMAP("other", { k: "updated" }));
    const message = await failureOf(() => ops.up(options()));
    expect(message)
      .to.contain("bundle reach-app")
      .and.contain("app/fleet.yaml")
      .and.contain("targetCustomizations[all].serviceAccount: service account fleet-agent is refused")
      .and.contain("gitRepos[reach].allowedServiceAccounts");
    expect(await kubeGet(s.cluster, CRB), "no ClusterRoleBinding as the agent's account").to.equal(undefined);
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/other`)).data, "the other GitRepo deployed in the same up").to.deep.equal({
      k: "updated",
    });
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/app`)).data, "the refused bundle keeps what it deployed").to.deep.equal({ k: "v" });
  });
});
