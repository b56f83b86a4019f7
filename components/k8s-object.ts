/**
 * One Pulumi resource per Kubernetes object. The Kubernetes provider only needs a type token naming
 * the object's group, version and kind (core/desired/objects.ts typeTokenOf), so arbitrary kinds
 * (including custom resources) are registered through one small class instead of a switch over every
 * typed class.
 */
import * as pulumi from "@pulumi/pulumi";
import { K8sObject } from "../core/bundles/manifests";

export class KubernetesObject extends pulumi.CustomResource {
  constructor(name: string, type: string, obj: K8sObject, opts: pulumi.CustomResourceOptions) {
    super(type, name, { ...obj }, opts);
  }
}
