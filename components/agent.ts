/**
 * The in-cluster agent of one cluster, from its effective configuration (core/agent). Names, selector
 * and labels never change, so no configuration change can force a replacement: every change is an
 * update of the same objects. The pod template carries one varying value, the config hash, so the
 * pods roll exactly when the effective configuration changed, and never otherwise.
 *
 * Strategy Recreate: the old pod is gone before the new one starts, so however many changes roll in a
 * row, at most one agent pod runs at a time and one runs at the end (fleet#3483 had five). A surge-free
 * RollingUpdate (maxSurge 0) gives the same count but still overlaps pods during termination.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { ResolvedAgent } from "../core/agent/effective";
import { clusterLabels, PATCH_FORCE_ANNOTATION } from "./labels";

export const AGENT_TYPE = "pulumi-fleet:index:Agent";
export const AGENT_NAME = "fleet-agent";
export const CONFIG_HASH_ANNOTATION = "pulumi-fleet.io/agent-config-hash";
const SELECTOR = { app: AGENT_NAME };
const BOOTSTRAP_SECRET = `${AGENT_NAME}-bootstrap`;

export interface AgentArgs {
  cluster: string;
  agent: ResolvedAgent;
  provider: k8s.Provider;
}

export class Agent extends pulumi.ComponentResource {
  readonly image: pulumi.Output<string>;
  readonly configHash: pulumi.Output<string>;

  constructor(name: string, args: AgentArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super(AGENT_TYPE, name, {}, opts);
    const { config, hash } = args.agent;
    const ns = config.namespace;
    const child = { parent: this, provider: args.provider };
    const labels = { ...config.labels, ...SELECTOR, ...clusterLabels(args.cluster) };
    const annotations = { [PATCH_FORCE_ANNOTATION]: "true" };
    const meta = (objName: string, namespaced = true) => ({ name: objName, ...(namespaced ? { namespace: ns } : {}), labels, annotations });
    const id = (role: string) => `${name}/agent/${role}`;

    const namespace = new k8s.core.v1.Namespace(id("namespace"), { metadata: { name: ns, labels, annotations } }, child);
    const inNs = { ...child, dependsOn: [namespace] };
    const sa = new k8s.core.v1.ServiceAccount(id("serviceaccount"), { metadata: meta(AGENT_NAME) }, inNs);
    const role = new k8s.rbac.v1.ClusterRole(id("clusterrole"), {
      metadata: meta(`${AGENT_NAME}-${ns}`, false),
      rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }, { nonResourceURLs: ["*"], verbs: ["*"] }],
    }, child);
    new k8s.rbac.v1.ClusterRoleBinding(id("clusterrolebinding"), {
      metadata: meta(`${AGENT_NAME}-${ns}`, false),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
      subjects: [{ kind: "ServiceAccount", name: AGENT_NAME, namespace: ns }],
    }, child);
    const secret = new k8s.core.v1.Secret(id("secret"), {
      metadata: meta(BOOTSTRAP_SECRET),
      stringData: pulumi.secret({ apiServerURL: config.apiServerURL, apiServerCA: config.apiServerCA, token: args.agent.token ?? "" }),
    }, inNs);
    let priorityClassName: string | undefined;
    if (config.priorityClass) {
      priorityClassName = `${AGENT_NAME}-${ns}`;
      new k8s.scheduling.v1.PriorityClass(id("priorityclass"), {
        metadata: meta(priorityClassName, false), value: config.priorityClass.value,
        ...(config.priorityClass.preemptionPolicy ? { preemptionPolicy: config.priorityClass.preemptionPolicy } : {}),
      }, child);
    }
    if (config.podDisruptionBudget) {
      new k8s.policy.v1.PodDisruptionBudget(id("pdb"), { metadata: meta(AGENT_NAME), spec: { ...config.podDisruptionBudget, selector: { matchLabels: SELECTOR } } }, inNs);
    }
    const fromSecret = (envName: string, key: string) => ({ name: envName, valueFrom: { secretKeyRef: { name: BOOTSTRAP_SECRET, key } } });
    const deployment = {
      metadata: meta(AGENT_NAME),
      spec: {
        replicas: 1,
        revisionHistoryLimit: 2,
        strategy: { type: "Recreate" },
        selector: { matchLabels: SELECTOR },
        template: {
          metadata: { labels, annotations: { [CONFIG_HASH_ANNOTATION]: hash } },
          spec: {
            serviceAccountName: AGENT_NAME,
            ...(config.pullSecrets.length ? { imagePullSecrets: config.pullSecrets.map((n) => ({ name: n })) } : {}),
            ...(config.tolerations.length ? { tolerations: config.tolerations } : {}),
            ...(Object.keys(config.affinity).length ? { affinity: config.affinity } : {}),
            ...(config.hostNetwork ? { hostNetwork: true } : {}),
            ...(priorityClassName ? { priorityClassName } : {}),
            containers: [{
              name: AGENT_NAME,
              image: config.image,
              imagePullPolicy: config.imagePullPolicy,
              env: [
                { name: "NAMESPACE", value: ns },
                { name: "AGENT_TLS_MODE", value: config.tlsMode },
                { name: "CHECKIN_INTERVAL", value: config.checkinInterval },
                { name: "GARBAGE_COLLECTION_INTERVAL", value: config.garbageCollectionInterval },
                fromSecret("API_SERVER_URL", "apiServerURL"),
                fromSecret("API_SERVER_CA", "apiServerCA"),
                ...config.env,
              ],
              ...(Object.keys(config.resources).length ? { resources: config.resources } : {}),
            }],
          },
        },
      },
    };
    new k8s.apps.v1.Deployment(id("deployment"), deployment, { ...inNs, dependsOn: [namespace, sa, secret] });

    this.image = pulumi.output(config.image);
    this.configHash = pulumi.output(hash);
    this.registerOutputs({ image: this.image, configHash: this.configHash });
  }
}
