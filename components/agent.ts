/** The in-cluster agent of one cluster: the objects core/desired/agent.ts describes, as typed resources. */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { AgentObjects, agentResourceName } from "../core/desired/agent";
import { AGENT_TYPE } from "../core/desired/types";

export interface AgentArgs {
  agent: AgentObjects;
  provider: k8s.Provider;
}

export class Agent extends pulumi.ComponentResource {
  readonly image: pulumi.Output<string>;
  readonly configHash: pulumi.Output<string>;

  constructor(name: string, args: AgentArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super(AGENT_TYPE, name, {}, opts);
    const o = args.agent;
    const child = { parent: this, provider: args.provider };
    const id = (role: string) => agentResourceName(name, role);
    // Kept on the cluster when the agent goes (switched off, moved, destroyed), as `helm uninstall` of
    // Fleet's agent keeps it: whatever else lives there (a fleet-default account) is not deleted with it.
    const namespace = new k8s.core.v1.Namespace(id("namespace"), o.namespace,
      { ...child, retainOnDelete: true, aliases: [{ name: o.namespaceAlias, parent: opts.parent }] });
    const inNs = { ...child, dependsOn: [namespace] };
    const sa = new k8s.core.v1.ServiceAccount(id("serviceaccount"), o.serviceAccount, inNs);
    const role = new k8s.rbac.v1.ClusterRole(id("clusterrole"), o.clusterRole, child);
    // The role's own output as the name: the binding then waits for the role.
    new k8s.rbac.v1.ClusterRoleBinding(id("clusterrolebinding"), { ...o.clusterRoleBinding, roleRef: { ...o.clusterRoleBinding.roleRef, name: role.metadata.name } }, child);
    const secret = new k8s.core.v1.Secret(id("secret"), { ...o.secret, stringData: pulumi.secret(o.secret.stringData) }, inNs);
    if (o.priorityClass) new k8s.scheduling.v1.PriorityClass(id("priorityclass"), o.priorityClass, child);
    if (o.podDisruptionBudget) new k8s.policy.v1.PodDisruptionBudget(id("pdb"), o.podDisruptionBudget, inNs);
    new k8s.apps.v1.Deployment(id("deployment"), o.deployment, { ...inNs, dependsOn: [namespace, sa, secret] });

    this.image = pulumi.output(o.image);
    this.configHash = pulumi.output(o.configHash);
    this.registerOutputs({ image: this.image, configHash: this.configHash });
  }
}
