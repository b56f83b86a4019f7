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
