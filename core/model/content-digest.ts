/**
 * The one rule for a render's digest, the name of its BundleContent resource (components/content.ts):
 * the same in Go (tools/fleet-provider content_digest.go), which checks a content's digest and compares
 * a pair's objects by theirs (diffPair), also those of a state whose objects still hold their manifests.
 * test/unit/content-digest.test.ts and content_digest_test.go hold both to one fixture.
 *
 * An object's digest is the sha256 of its manifest's canonical JSON: object keys sorted by UTF-16 code
 * units at every level, no white space, strings and numbers as JSON.stringify writes them. A content's
 * digest is the sha256 of the canonical JSON of its objects' digests by key.
 */
import { hash } from "node:crypto";

/** The canonical JSON of a JSON value (written directly: an object rebuilt with sorted keys would still list integer-like keys first). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
}

const sha256 = (text: string) => hash("sha256", text, "hex");

/** An object's digest: what a pair's inputs hold in place of its manifest. */
export function objectDigest(manifest: unknown): string {
  return sha256(canonicalJson(manifest));
}

/** A content's digest from its objects' digests by key. */
export function contentDigest(objectDigests: Record<string, string>): string {
  return sha256(canonicalJson(objectDigests));
}
