/**
 * A namespace with a service account that may only read and write ConfigMaps there: the narrow
 * identity the serviceAccount tests deploy as (its RBAC refuses everything else with a 403).
 */
import { kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";

export async function configMapsOnlyAccount(cluster: LocalCluster, namespace: string, account: string): Promise<void> {
  const post = (path: string, body: object) => kubeRequest(cluster, "POST", path, { body });
  await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  await post(`/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: account } });
  await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "configmaps-only" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] }],
  });
  await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: account },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmaps-only" },
    subjects: [{ kind: "ServiceAccount", name: account, namespace }],
  });
}
