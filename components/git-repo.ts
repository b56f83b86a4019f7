/** A GitRepo: the parent of its BundleDeployments, with the commit it deployed. */
import * as pulumi from "@pulumi/pulumi";
import { GIT_REPO_TYPE } from "../core/desired/types";

export interface GitRepoArgs {
  commit: string;
  bundles: string[];
  clusters: string[];
}

export class GitRepo extends pulumi.ComponentResource {
  readonly commit: pulumi.Output<string>;
  readonly bundles: pulumi.Output<string[]>;
  readonly clusters: pulumi.Output<string[]>;

  constructor(name: string, args: GitRepoArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super(GIT_REPO_TYPE, name, {}, opts);
    this.commit = pulumi.output(args.commit);
    this.bundles = pulumi.output(args.bundles);
    this.clusters = pulumi.output(args.clusters);
    this.registerOutputs({ commit: this.commit, bundles: this.bundles, clusters: this.clusters });
  }
}
