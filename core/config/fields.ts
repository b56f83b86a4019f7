/**
 * The field readers the stack file's sections share: a name (a DNS label), labels or annotations, and
 * a secret field, which is `{secure: ...}` until the engine decrypts it.
 */
import { Field, isPlainObject } from "./reader";
import { dnsLabelProblem, labelKeyProblem, labelValueProblem } from "../base/k8s-validation";

export function readName(f: Field): string {
  const name = f.string();
  const problem = dnsLabelProblem(name);
  if (problem) f.fail(`invalid name ${JSON.stringify(name)}: ${problem}`);
  return name;
}

export function readLabels(f: Field, what: "label" | "annotation"): Record<string, string> {
  const map = f.stringMap();
  for (const [k, v] of Object.entries(map)) {
    const keyProblem = labelKeyProblem(k);
    if (keyProblem) f.child(k).fail(`invalid ${what} key: ${keyProblem}`);
    if (what === "label") {
      const valueProblem = labelValueProblem(v);
      if (valueProblem) f.child(k).fail(`invalid label value ${JSON.stringify(v)}: ${valueProblem}`);
    }
  }
  return map;
}

/** A secret field: a plain string in the decrypted config, or `{secure: ...}` when read from the file. */
export function readSecret(f: Field): string | undefined {
  if (isPlainObject(f.value) && typeof (f.value as { secure?: unknown }).secure === "string") return undefined;
  return f.optString();
}
