/**
 * Fleet's naming rules (rancher/fleet internal/names), reproduced exactly so that bundles read from a
 * Fleet repository get the names Fleet would give them.
 */
import { md5Hex, sha256Hex } from "./hash";

export const MAX_HELM_RELEASE_NAME = 53;

const disallowedChars = /[^a-zA-Z0-9-]+/g;
const helmReleaseName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const dnsLabelSafe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** md5 of s, hex, first `length` characters. */
export function hexHash(s: string, length: number): string {
  return md5Hex(s).slice(0, length);
}

/** Truncates to `count` characters, ending in "-" + 5 hex characters of md5(s) (Fleet's names.Limit). */
export function limit(s: string, count: number): string {
  if (s.length <= count) return s;
  const hexLen = 5;
  let separator = "-";
  if (count <= hexLen + separator.length) return s.slice(0, count);
  const keep = count - hexLen - separator.length;
  if (s[keep - 1] === separator) separator = "";
  return `${s.slice(0, keep)}${separator}${hexHash(s, hexLen)}`;
}

/** A DNS-label-safe Helm release name derived from any string (Fleet's names.HelmReleaseName). */
export function helmReleaseNameOf(input: string): string {
  let s = input.replace(/\//g, "-");
  const needHex = s !== s.toLowerCase() || new RegExp(disallowedChars.source).test(s);
  if (needHex) s = `${s}-${hexHash(s, 8)}`;
  s = s.toLowerCase().replace(disallowedChars, "-").replace(/-+/g, "-").replace(/^-+/, "").replace(/-+$/, "");
  if (helmReleaseName.test(s) && dnsLabelSafe.test(s)) return limit(s, MAX_HELM_RELEASE_NAME);
  return hexHash(input, 24);
}

/** Fleet's bundle ID: filepath.Join(gitRepoName, path), then HelmReleaseName. */
export function bundleNameFor(gitRepoName: string, relPath: string): string {
  return helmReleaseNameOf(joinPath(gitRepoName, relPath));
}

/** Go's filepath.Join for relative, slash-separated paths: cleans "." and empty elements. */
export function joinPath(...parts: string[]): string {
  const out: string[] = [];
  for (const part of parts.join("/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else out.push(part);
  }
  return out.join("/") || ".";
}

/** Fleet's names.SafeConcatName: join with "-", keep under 64 characters with a sha256 suffix. */
export function safeConcatName(...parts: string[]): string {
  const full = parts.join("-");
  if (full.length < 64) return full;
  const digest = sha256Hex(full);
  // The cut may land on a character Kubernetes does not accept at the end of a name: drop it then.
  return /[a-z0-9]/.test(full[56]) ? `${full.slice(0, 57)}-${digest.slice(0, 5)}` : `${full.slice(0, 56)}-${digest.slice(0, 6)}`;
}
