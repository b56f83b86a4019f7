/**
 * Each distinct render once: a BundleContent resource per digest (core/model/content-digest.ts), whose
 * inputs are the manifests, and which does nothing on any cluster (tools/fleet-provider content.go keeps
 * them in memory for the pairs that name it). A pair registers only the digest and its objects'
 * identities and digests (core/model/pair.ts contentForm), so the state holds a render once per stack
 * instead of once per cluster, as Fleet keeps a bundle's content once (its Content resource, by digest).
 * A content no pair registers any more is not registered: the engine deletes it (a no-op).
 */
import * as pulumi from "@pulumi/pulumi";
import { BUNDLE_CONTENT_TYPE } from "../core/desired/types";
import { ContentManifests } from "../core/model/pair";

export class BundleContent extends pulumi.CustomResource {
  constructor(digest: string, manifests: ContentManifests, opts: pulumi.CustomResourceOptions) {
    super(BUNDLE_CONTENT_TYPE, digest, { objects: manifests }, opts);
  }
}

/** The stack's contents, each registered once however many pairs deploy it. */
export class Contents {
  private readonly byDigest = new Map<string, BundleContent>();
  constructor(private readonly opts: pulumi.CustomResourceOptions) {}

  of(digest: string, manifests: ContentManifests): BundleContent {
    let r = this.byDigest.get(digest);
    if (!r) this.byDigest.set(digest, (r = new BundleContent(digest, manifests, this.opts)));
    return r;
  }
}
