/**
 * One (bundle, cluster) pair, as Fleet's BundleDeployment: one engine resource whose inputs are the
 * pair's spec as core/desired computed it and whose outputs are Fleet's BundleDeployment status. The
 * provider (tools/fleet-provider) applies its objects as one set; a refused apply or a readiness timeout
 * is its state (ErrApplied, NotReady), not an engine error, so every other pair goes on. When the pair
 * leaves the desired state it is not registered any more, and the engine deletes it (its objects, under
 * its delete policy) in the same update.
 */
import * as pulumi from "@pulumi/pulumi";
import { namespacesRefusedFor } from "../core/desired/namespaces";
import { appliedAfterSetup } from "../core/desired/setup";
import { DesiredDeployment } from "../core/desired/types";
import { hookObject, PairObject, registeredSet } from "../core/model/pair";
import { BundleDeploymentPair, ClusterSetupSet, FleetProvider, PairArgs } from "./pair";
import { BundleContent, Contents } from "./content";

export interface BundleDeploymentArgs {
  deployment: DesiredDeployment;
  /** The stack's provider. */
  provider: FleetProvider;
  /** The key of the provider's configuration the pair is applied through: its cluster, as its service account when it has one. */
  cluster: string;
  /** The cluster's namespaces, agent and operator's Secrets, applied first when some of its objects are in those namespaces or its GitRepo has Secrets there. */
  setup?: ClusterSetupSet;
  /** The pairs this one waits for (fleet.yaml dependsOn, rollout), by key: it applies once each is Ready. */
  waitFor: [string, BundleDeploymentPair][];
  /** The stack's BundleContent resources: a pair whose objects are not secret names its render's, registered once. */
  contents?: Contents;
  /** What it takes over of an earlier version's resources (core/migrate/adoptions.ts), while the state holds them. */
  adopt?: Record<string, PairObject>;
}

export function bundleDeployment(name: string, args: BundleDeploymentArgs, opts: pulumi.CustomResourceOptions): BundleDeploymentPair {
  const d = args.deployment;
  const waitFor = args.waitFor.map(([key, pair]) => ({ name: key, state: pair.state }));
  // Objects holding what a lookup read from a Secret (core/render/lookup-secrets.ts): a secret in the state and the preview,
  // kept in the pair (a content resource is not a secret). Other objects are kept once per render, in its BundleContent.
  // A held pair whose content is not in the state registers its inputs as the state holds them (core/model/pair.ts keptAsInState), naming no BundleContent.
  let content: BundleContent | undefined;
  let objects: PairArgs["objects"] = d.secret ? pulumi.secret(d.spec.objects) : d.spec.objects;
  let contentDigest: { content?: string } = {};
  // Its hooks are a secret when the set is, or when one of them is a Secret (then none goes to the content, which is not one).
  const secretHooks = !!d.spec.hooks && (d.secret || d.spec.hooks.some((h) => hookObject(h).kind === "Secret"));
  let hooks: { hooks?: PairArgs["hooks"] } = secretHooks ? { hooks: pulumi.secret(d.spec.hooks!) } : {};
  const form = !d.secret ? registeredSet(d.spec, !!args.contents, !secretHooks) : undefined;
  if (form?.content !== undefined) {
    if (form.manifests && args.contents) content = args.contents.of(form.content, form.manifests);
    objects = form.objects;
    contentDigest = { content: form.content };
    if (form.hooks) hooks = { hooks: form.hooks };
  }
  // Its Secrets (core/desired/objects.ts pairSpecOf): a secret in the state and the preview, whatever the rest is.
  const secretObjects = d.spec.secretObjects ? { secretObjects: pulumi.secret(d.spec.secretObjects) } : {};
  // A namespace of its cluster's setup that the API server refused fails the pairs that need it, and only them.
  const needed = d.clusterNamespaces;
  const refused = args.setup && needed.length ? { namespacesRefused: args.setup.messages.apply((m) => namespacesRefusedFor(needed, m)) } : {};
  const pair = new BundleDeploymentPair(
    name,
    {
      ...d.spec,
      ...contentDigest,
      cluster: args.cluster,
      objects,
      ...secretObjects,
      ...hooks,
      ...(waitFor.length ? { waitFor } : {}),
      ...refused,
      ...(args.adopt && Object.keys(args.adopt).length ? { adopt: args.adopt } : {}),
    },
    {
      ...opts,
      provider: args.provider,
      // The API server may quote a refused field's value in its message, and the live status views echo
      // objects: for such a pair they are secrets in the state and the engine's events too.
      ...(d.secret ? { additionalSecretOutputs: ["messages", "live"] } : {}),
      // Its content's Check (which hands the provider the manifests) runs before this pair's Create or Update.
      dependsOn: [...(content ? [content] : []), ...args.waitFor.map(([, p]) => p), ...(args.setup && appliedAfterSetup(d) ? [args.setup] : [])],
    },
  );
  for (const w of d.warnings) pulumi.log.warn(w, pair);
  return pair;
}
