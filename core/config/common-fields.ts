/** Field tables the stack file and fleet.yaml share: a label selector and a target's criteria. */
import { FieldTable, listOf, obj, ref, str, stringList, stringMap } from "./field-table";
import { SELECTOR_OPERATORS } from "../model/selector";

export const LABEL_SELECTOR_FIELDS: FieldTable = {
  matchLabels: stringMap("labels that must all be equal"),
  matchExpressions: listOf(
    obj({
      key: str("a label key"),
      operator: str("In, NotIn, Exists or DoesNotExist", SELECTOR_OPERATORS),
      values: stringList("non-empty for In and NotIn, empty for Exists and DoesNotExist"),
    }),
  ),
};

const selector = (description: string) => ref("LabelSelector", LABEL_SELECTOR_FIELDS, description);

/** Fleet's GitTarget / BundleTarget criteria: all given must hold. */
export const TARGET_CRITERIA_FIELDS: FieldTable = {
  name: str("the target's name"),
  clusterName: str("a cluster's name"),
  clusterSelector: selector("the clusters' labels"),
  clusterGroup: str("a cluster group's name"),
  clusterGroupSelector: selector("the cluster groups' labels"),
};
