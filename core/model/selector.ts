/** Kubernetes label selectors (matchLabels + matchExpressions): their shape, and how one matches a set of labels. */
export const SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;
export type SelectorOperator = (typeof SELECTOR_OPERATORS)[number];

export interface LabelSelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** An empty selector `{}` matches everything; an absent one is handled by the caller (no criterion). As metav1.LabelSelectorAsSelector evaluates it. */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
  const { matchLabels, matchExpressions } = selector;
  for (const k in matchLabels) {
    if (labels[k] !== matchLabels[k]) return false;
  }
  if (!matchExpressions) return true;
  for (const req of matchExpressions) {
    const has = Object.prototype.hasOwnProperty.call(labels, req.key);
    switch (req.operator) {
      case "In":
        if (!has || !(req.values ?? []).includes(labels[req.key])) return false;
        break;
      case "NotIn":
        if (has && (req.values ?? []).includes(labels[req.key])) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
    }
  }
  return true;
}
