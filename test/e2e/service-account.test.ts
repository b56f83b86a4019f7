/**
 * fleet.yaml `serviceAccount` on a live cluster. Fleet installs such a bundle impersonating
 * system:serviceaccount:<agent namespace>:<name>, so the cluster's RBAC for that account bounds what
 * the bundle may change. Here the account may manage ConfigMaps in one namespace and nothing else: its
 * ConfigMap is applied, and a Secret added to the bundle fails with the API server's 403 naming the
 * object and the account, while the stack's own (admin) credentials could have created it. A bundle that
 * names no account is applied as `fleet-default` when that account exists in the agent namespace.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { CONFIGMAP } from "../support/git-fixtures";
import { failureOf, liveStack } from "../support/live-stack";
import { configMapsOnlyAccount } from "../support/restricted-account";

// The agent's namespace is where Fleet looks the account up; here the bundle deploys there too.
const NS = "sa-test";
const USER = `system:serviceaccount:${NS}:deployer`;
const SECRET = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: forbidden\nstringData:\n  k: v\n`;

describe("serviceAccount on a live cluster (objects applied as the account, bounded by its RBAC)", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("sa", {
    namespace: NS,
    paths: ["app"],
    agent: { namespace: NS },
    files: { "app/cm.yaml": CONFIGMAP("allowed"), "app/fleet.yaml": `defaultNamespace: ${NS}\nserviceAccount: deployer\n` },
    setup: async ({ cluster }) => {
      await configMapsOnlyAccount(cluster, NS, "deployer");
    },
  });

  it("what the account may do is applied", async () => {
    const r = await ops.up(s.options());
    expect(r.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed sa-app"]);
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/allowed`)).data).to.deep.equal({ k: "v" });
  });

  it("an object the account may not create fails with the API server's 403 naming object and account; nothing else changes", async () => {
    s.write("app/secret.yaml", SECRET);
    const message = await failureOf(() => ops.up(s.options()));
    expect(message).to.contain(`secrets "forbidden" is forbidden: User "${USER}" cannot`);
    expect(message).to.contain("sa-app");
    expect(await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/secrets/forbidden`)).to.equal(undefined);
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/allowed`)).data).to.deep.equal({ k: "v" });
  });

  it("without serviceAccount the same bundle is applied with the stack's credentials; no object is replaced", async () => {
    const uid = (await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/allowed`)).metadata.uid;
    s.write("app/fleet.yaml", `defaultNamespace: ${NS}\n`);
    await ops.up(s.options());
    expect(await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/secrets/forbidden`)).to.not.equal(undefined);
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/allowed`)).metadata.uid, "same ConfigMap").to.equal(uid);
  });

  it("without serviceAccount but with fleet-default in the agent namespace, the bundle is applied as fleet-default (Fleet's fallback)", async () => {
    await kubeRequest(s.cluster, "POST", `/api/v1/namespaces/${NS}/serviceaccounts`, {
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "fleet-default" } },
    });
    s.write("app/secret.yaml", SECRET.replace("k: v", "k: changed"));
    const message = await failureOf(() => ops.up(s.options()));
    expect(message).to.contain(`secrets "forbidden" is forbidden: User "system:serviceaccount:${NS}:fleet-default" cannot`);
    // Without it, the stack's own credentials again.
    await kubeRequest(s.cluster, "DELETE", `/api/v1/namespaces/${NS}/serviceaccounts/fleet-default`);
    await ops.up(s.options());
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/secrets/forbidden`)).data.k).to.equal(Buffer.from("changed").toString("base64"));
  });
});
