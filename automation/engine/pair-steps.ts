/**
 * A BundleDeployment is one engine resource; reports speak of its objects. Each step of a pair becomes
 * one step per object it touches, under the pair, as the per-object resources of earlier versions were:
 * a create creates its objects, a delete deletes them (those its delete policy retains aside), an
 * update creates, updates (with the fields) and deletes what its detailed diff names (paths
 * `objects["<key>"]...`, tools/fleet-provider decide.go), and a refresh reads each live object the
 * provider reported. The pair itself then counts as a component, as the earlier BundleDeployment did.
 * A cluster's setup (its namespaces and agent) is such a set too, and is expanded the same way.
 */
import { K8sObject, objectKey } from "../../core/model/k8s-object";
import { typeTokenOf } from "../../core/desired/objects";
import { EngineObject, fromEngineObjects, PairObject } from "../../core/model/pair";
import { objectDigest } from "../../core/model/content-digest";
import { stableJson } from "../../core/base/hash";
import { nameOfUrn } from "../../core/model/keys";
import { isAppliedSet } from "../../core/desired/setup";
import type { Step } from "./step-recorder";

/** `objects["<key>"]` (or `secretObjects["<key>"]`) then the rest of the path, as the provider writes it. */
const OBJECT_PATH = /^(objects|secretObjects)\["((?:[^"\\]|\\.)*)"\](.*)$/;

/** A whole object's entry in a detailed diff: added, deleted, or changed. */
function kindOp(diff: unknown): Step["op"] {
  const kind = String((diff as { diffKind?: string } | undefined)?.diffKind ?? "");
  return kind.startsWith("add") ? "create" : kind.startsWith("delete") ? "delete" : "update";
}

/** `moving`: an earlier version's per-object resources this operation moves into their BundleDeployments. */
export function expandPairSteps(steps: Step[], moving: ReadonlySet<string> = new Set()): Step[] {
  const out: Step[] = [];
  for (const s of steps) {
    // An earlier version's per-object resource that its BundleDeployment adopts: dropped from the state only.
    if (s.op === "delete" && moving.has(s.urn)) continue;
    // A pair whose objects are a secret (its lookups read a Secret) has them blinded in the engine's
    // events: it counts as one object, its own.
    if (!isAppliedSet(s.type) || !s.custom || masked(s.inputs?.objects) || masked(s.oldInputs?.objects)) {
      out.push(s);
      continue;
    }
    out.push({ ...s, custom: false });
    out.push(...objectSteps(s));
  }
  return out;
}

function objectSteps(s: Step): Step[] {
  const news = objectsOf(s.inputs);
  const olds = objectsOf(s.oldInputs);
  const child = (op: Step["op"], o: PairObject, diffs: string[] = [], outputs?: Record<string, unknown>): Step => {
    const m = o.manifest as unknown as K8sObject;
    return {
      op,
      urn: `${s.urn}$${typeTokenOf(m)}::${nameOfUrn(s.urn)}/${objectKey(m)}`,
      type: typeTokenOf(m),
      custom: true,
      parent: s.urn,
      diffs,
      failed: s.failed,
      ...(outputs ? { outputs } : {}),
    };
  };
  switch (s.op) {
    case "create":
    case "create-replacement": {
      // A pair that adopts an earlier version's objects: those it holds unchanged are not touched, those
      // it no longer holds are pruned (unless retained).
      const adopt = objectsOf(s.inputs, "adopt");
      // An adopted Secret is held by the set's secret objects, whose keys the events blind, when it has some.
      const keptSecret = (o: PairObject) => o.manifest.kind === "Secret" && s.inputs?.secretObjects !== undefined;
      const pruned = Object.entries(adopt)
        .filter(([k, o]) => !news[k] && !o.retain && !keptSecret(o))
        .map(([, o]) => child("delete", o));
      // A pair whose set is in its content holds each object's digest, not its manifest (core/model/pair.ts contentForm).
      const digests = digestsOf(s.inputs);
      const same = (k: string, o: PairObject) => (digests[k] ? objectDigest(adopt[k].manifest) === digests[k] : sameManifest(adopt[k], o));
      const applied = Object.entries(news)
        .filter(([k, o]) => !adopt[k] || !same(k, o))
        .map(([k, o]) => child(adopt[k] ? "update" : "create", o));
      return [...applied, ...pruned];
    }
    case "delete":
    case "delete-replaced":
      return Object.values(olds)
        .filter((o) => !o.retain)
        .map((o) => child("delete", o));
    case "update": {
      const byKey = new Map<string, string[]>();
      const changedSecrets = new Map<string, Step["op"]>();
      // An object in both inputs that the provider names as added: a gate held it back, this update creates it (decide.go heldObjects).
      const added = new Set<string>();
      for (const [path, diff] of Object.entries(s.detailedDiff ?? {})) {
        const m = OBJECT_PATH.exec(path);
        if (!m) continue;
        const key = JSON.parse(`"${m[2]}"`) as string;
        if (m[1] === "secretObjects") {
          changedSecrets.set(key, m[3] ? "update" : kindOp(diff));
          continue;
        }
        if (!m[3] && kindOp(diff) === "create") added.add(key);
        (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(m[3].replace(/^\.manifest\.?/, ""));
      }
      return (
        [...byKey]
          .map(([key, fields]) => {
            if (!olds[key] || (added.has(key) && news[key])) return child("create", news[key]);
            // A Secret an earlier version held among the readable objects moves to the secret ones: re-applied, not deleted.
            if (!news[key] && changedSecrets.has(key)) return changedSecrets.set(key, "update") && child("same", olds[key]);
            if (!news[key]) return child(olds[key].retain ? "same" : "delete", olds[key]);
            return child("update", news[key], fields.filter((f) => f !== "").sort());
          })
          .filter((x) => x.op !== "same")
          // The set's secret objects (a cluster setup's agent token) are blinded in the events: only their keys show, in the diff's paths.
          .concat([...changedSecrets].map(([k, op]) => child(op, keyStub(k))))
      );
    }
    case "refresh":
      return ((s.outputs?.live ?? []) as Record<string, unknown>[]).map((live) => child("refresh", { manifest: live }, [], live));
    default:
      return [];
  }
}

function sameManifest(a: PairObject, b: PairObject): boolean {
  return stableJson(a.manifest) === stableJson(b.manifest);
}

/** The engine's events blind a secret: its signature around `ciphertext: "[secret]"`, never the value. */
const masked = (v: unknown) => v !== undefined && (v === null || typeof v !== "object" || SECRET_SIG in v);
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

function objectsOf(inputs: Record<string, unknown> | undefined, field: "objects" | "adopt" = "objects"): Record<string, PairObject> {
  const v = inputs?.[field];
  return v && !masked(v) ? fromEngineObjects(v as Parameters<typeof fromEngineObjects>[0]) : {};
}

/** Each object's digest, for a set kept in its content (EngineObject.digest). */
function digestsOf(inputs: Record<string, unknown> | undefined): Record<string, string> {
  const v = inputs?.objects;
  if (!v || masked(v)) return {};
  return Object.fromEntries(Object.entries(v as Record<string, EngineObject>).flatMap(([k, o]) => (o.digest ? [[k, o.digest]] : [])));
}

/** An object known only by its key (group/kind/namespace/name): its version is v1, as the Secrets kept apart are. */
function keyStub(key: string): PairObject {
  const [group, kind, namespace, name] = key.split("/");
  return { manifest: { apiVersion: group ? `${group}/v1` : "v1", kind, metadata: { name, ...(namespace ? { namespace } : {}) } } };
}
