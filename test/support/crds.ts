/**
 * A namespaced custom resource kind with a status subresource and any fields, for tests whose objects'
 * readiness comes from their status (ignore.conditions, health checks): created, then waited for until
 * the API server serves it.
 */
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import { eventually } from "./eventually";

export interface StatusKind {
  group: string;
  kind: string;
  plural: string;
  singular: string;
}

/** The CustomResourceDefinition's name: `<plural>.<group>`. */
export const crdName = (k: StatusKind) => `${k.plural}.${k.group}`;

export async function installStatusKind(cluster: LocalCluster, k: StatusKind): Promise<void> {
  await kubeRequest(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    body: {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: crdName(k) },
      spec: {
        group: k.group,
        scope: "Namespaced",
        names: { plural: k.plural, singular: k.singular, kind: k.kind },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    },
  });
  await eventually(
    `the ${k.kind} kind is served`,
    () => kubeGet(cluster, `/apis/${k.group}/v1`),
    (x) => !!x,
  );
}
