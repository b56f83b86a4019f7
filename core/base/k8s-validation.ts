/** What the Kubernetes API server would reject in names, labels and annotations, checked up front. */

const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Returns why `key` is not a valid label or annotation key, or undefined when it is valid. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split("/");
  if (parts.length > 2) return "a qualified name has at most one '/'";
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0) return "prefix part must be non-empty";
    if (prefix.length > 253 || !dns1123Subdomain.test(prefix)) return "prefix part must be a lowercase DNS subdomain (RFC 1123)";
  }
  if (name.length === 0) return "name part must be non-empty";
  if (name.length > 63) return "name part must be no more than 63 characters";
  if (!qualifiedNamePart.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Returns why `value` is not a valid label value, or undefined when it is valid. */
export function labelValueProblem(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > 63) return "must be no more than 63 characters";
  if (!qualifiedNamePart.test(value)) {
    return "must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** The API server's bound on an object's annotations: keys and values together, in bytes (apimachinery's TotalAnnotationSizeLimitB). */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

/**
 * Why `annotations` would be refused, as apimachinery's ValidateAnnotations refuses them, or undefined:
 * each key a qualified name with case ignored (so an upper-case prefix passes, as there), and keys and
 * values together at most 256 KiB.
 */
export function annotationsProblem(annotations: Record<string, string>): string | undefined {
  let bytes = 0;
  for (const [k, v] of Object.entries(annotations)) {
    const kp = labelKeyProblem(k.toLowerCase());
    if (kp) return `invalid annotation key ${JSON.stringify(k)}: ${kp}`;
    bytes += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (bytes > ANNOTATIONS_MAX_BYTES)
    return `annotations are ${bytes} bytes, more than the API server's limit of ${ANNOTATIONS_MAX_BYTES} (keys and values together)`;
  return undefined;
}

export function dnsLabelProblem(name: string): string | undefined {
  if (name.length > 63) return "must be no more than 63 characters";
  if (!dns1123Label.test(name)) return "must be a lowercase RFC 1123 label (a-z, 0-9 and '-', starting and ending with an alphanumeric character)";
  return undefined;
}

export function dnsSubdomainProblem(name: string): string | undefined {
  if (name.length > 253) return "must be no more than 253 characters";
  if (!dns1123Subdomain.test(name)) return "must be a lowercase RFC 1123 subdomain (a-z, 0-9, '-' and '.')";
  return undefined;
}

const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** RBAC objects' names are path segments (`system:controller:x` is valid), as the API server checks them. */
const PATH_SEGMENT_KINDS = new Set(["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]);

/**
 * Why `name` is not a valid name for an object of `kind`, or undefined: checked before a name from
 * GitRepo content becomes a file name (render mode), a URN or a label. Namespaces are RFC 1123
 * labels, Services RFC 1035 labels, RBAC objects path segments, every other kind (custom resources
 * included) an RFC 1123 subdomain.
 */
export function objectNameProblem(kind: string, name: string): string | undefined {
  if (kind === "Namespace") return dnsLabelProblem(name);
  if (kind === "Service") {
    if (name.length > 63 || !dns1035Label.test(name))
      return "must be a lowercase RFC 1035 label (a-z, 0-9 and '-', starting with a letter, at most 63 characters)";
    return undefined;
  }
  if (PATH_SEGMENT_KINDS.has(kind)) {
    if (name === "." || name === "..") return `may not be ${JSON.stringify(name)}`;
    if (/[/%]/.test(name)) return "may not contain '/' or '%'";
    if (name.length > 253) return "must be no more than 253 characters";
    // eslint-disable-next-line no-control-regex -- control characters are what this refuses
    if (/[\u0000-\u001f\u007f]/.test(name)) return "may not contain control characters";
    return undefined;
  }
  return dnsSubdomainProblem(name);
}

/** Why `kind` is not a kind the API server could serve (a CRD's kind, lower-cased, is an RFC 1035 label), or undefined. */
export function kindProblem(kind: string): string | undefined {
  if (kind.length > 63 || !/^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$/.test(kind))
    return "must be an RFC 1035 label in any case (letters, digits and '-', starting with a letter)";
  return undefined;
}

/** Why `apiVersion` is not VERSION or GROUP/VERSION (GROUP an RFC 1123 subdomain, VERSION an RFC 1035 label), or undefined. */
export function apiVersionProblem(apiVersion: string): string | undefined {
  const parts = apiVersion.split("/");
  const version = parts[parts.length - 1];
  const group = parts.length === 2 ? parts[0] : "";
  if (parts.length > 2 || (parts.length === 2 && dnsSubdomainProblem(group) !== undefined) || version.length > 63 || !dns1035Label.test(version)) {
    return "must be VERSION or GROUP/VERSION (GROUP an RFC 1123 subdomain, VERSION an RFC 1035 label)";
  }
  return undefined;
}
