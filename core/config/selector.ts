/** Kubernetes label selectors (core/model/selector.ts), read from configuration as the API server validates them. */
import { Field } from "./reader";
import { labelKeyProblem, labelValueProblem } from "../base/k8s-validation";
import { keysOf, tableOf } from "./field-table";
import { LABEL_SELECTOR_FIELDS } from "./common-fields";
import { LabelSelector, LabelSelectorRequirement, SELECTOR_OPERATORS } from "../model/selector";

/** Reads and validates a selector the way the API server would, with the field path in every error. */
export function readSelector(f: Field): LabelSelector | undefined {
  if (!f.present) return undefined;
  f.object(keysOf(LABEL_SELECTOR_FIELDS));
  const matchLabels = f.child("matchLabels").stringMap();
  for (const [k, v] of Object.entries(matchLabels)) {
    const keyProblem = labelKeyProblem(k);
    if (keyProblem) f.child("matchLabels").child(k).fail(`invalid label key: ${keyProblem}`);
    const valueProblem = labelValueProblem(v);
    if (valueProblem)
      f.child("matchLabels")
        .child(k)
        .fail(`invalid label value ${JSON.stringify(v)}: ${valueProblem}`);
  }
  const matchExpressions = f
    .child("matchExpressions")
    .items()
    .map((e) => {
      e.object(keysOf(tableOf(LABEL_SELECTOR_FIELDS.matchExpressions)));
      const key = e.child("key").string();
      const keyProblem = labelKeyProblem(key);
      if (keyProblem) e.child("key").fail(`invalid label key: ${keyProblem}`);
      const operator = e.child("operator").oneOf(SELECTOR_OPERATORS);
      const values = e.child("values").stringList();
      if ((operator === "In" || operator === "NotIn") && values.length === 0) {
        e.child("values").fail(`must be non-empty for operator ${operator}`);
      }
      if ((operator === "Exists" || operator === "DoesNotExist") && values.length > 0) {
        e.child("values").fail(`must be empty for operator ${operator}`);
      }
      const req: LabelSelectorRequirement = { key, operator };
      if (values.length > 0) req.values = values;
      return req;
    });
  const out: LabelSelector = {};
  if (Object.keys(matchLabels).length > 0) out.matchLabels = matchLabels;
  if (matchExpressions.length > 0) out.matchExpressions = matchExpressions;
  return out;
}
