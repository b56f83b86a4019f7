/**
 * Names as Kubernetes validates them (apimachinery's validation package), checked before anything uses
 * a name from GitRepo content as a path, a URN part or a label: a rendered object's `metadata.name`
 * `../../x` must never become a file outside the render directory. The rules per kind are the API
 * server's: Namespaces are DNS-1123 labels, Services DNS-1035 labels, RBAC objects path segments
 * (`system:controller:x` is valid), every other kind (custom resources included) a DNS-1123 subdomain.
 * Kinds and API versions too: the provider's render mode builds file names from them as well.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PATH_SEGMENT_KINDS = new Set(["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]);

/** Why `name` is not a valid DNS-1123 label, or undefined. */
export function dnsLabelProblem(name: string): string | undefined {
  if (name.length > 63) return "must be at most 63 characters";
  if (!DNS1123_LABEL.test(name)) return "must be a DNS-1123 label (lower case letters, digits and '-', starting and ending with a letter or digit)";
  return undefined;
}

/** Why `name` is not a valid name for an object of `kind`, or undefined. */
export function objectNameProblem(kind: string, name: string): string | undefined {
  if (kind === "Namespace") return dnsLabelProblem(name);
  if (kind === "Service") {
    if (name.length > 63 || !DNS1035_LABEL.test(name)) return "must be a DNS-1035 label (at most 63 lower case letters, digits and '-', starting with a letter)";
    return undefined;
  }
  if (PATH_SEGMENT_KINDS.has(kind)) {
    if (name === "." || name === "..") return `may not be ${JSON.stringify(name)}`;
    if (/[/%]/.test(name)) return "may not contain '/' or '%'";
    if (name.length > 253) return "must be at most 253 characters";
    if (/[\u0000-\u001f\u007f]/.test(name)) return "may not contain control characters";
    return undefined;
  }
  if (name.length > 253) return "must be at most 253 characters";
  if (!DNS1123_SUBDOMAIN.test(name)) return "must be a DNS-1123 subdomain (lower case letters, digits, '-' and '.', starting and ending with a letter or digit)";
  return undefined;
}

/** Why `kind` is not a kind the API server could serve (a CRD's kind lower-cased is a DNS-1035 label), or undefined. */
export function kindProblem(kind: string): string | undefined {
  if (kind.length > 63 || !/^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$/.test(kind)) return "must be a DNS-1035 label in any case (letters, digits and '-', starting with a letter)";
  return undefined;
}

/** Why `apiVersion` is not `version` or `group/version` (group a DNS-1123 subdomain, version a DNS-1035 label), or undefined. */
export function apiVersionProblem(apiVersion: string): string | undefined {
  const parts = apiVersion.split("/");
  const version = parts[parts.length - 1];
  const group = parts.length === 2 ? parts[0] : "";
  if (parts.length > 2 || (parts.length === 2 && (group.length > 253 || !DNS1123_SUBDOMAIN.test(group))) || version.length > 63 || !DNS1035_LABEL.test(version)) {
    return "must be VERSION or GROUP/VERSION (GROUP a DNS-1123 subdomain, VERSION a DNS-1035 label)";
  }
  return undefined;
}
