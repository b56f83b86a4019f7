package main

// The provider's decisions, as pure functions of the old outputs and the new inputs: whether the engine
// should update the pair and what to show per object, what a prune deletes and what it keeps (and why),
// and whether the pair's gates let it apply. Nothing here talks to a cluster.

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// maxFieldDiffs bounds the per-object field paths shown in a preview; past it the object shows as one change.
const maxFieldDiffs = 64

// PairDiff is the diff decision for one pair.
type PairDiff struct {
	Changes bool
	// Property paths (as the engine reads them) to the kind of change.
	Detailed map[string]pulumirpc.PropertyDiff_Kind
	// Why the pair is re-applied without a change of its inputs ("" when it is not).
	Retry string
}

// diffPair decides whether the pair must be applied again. olds are the pair's outputs (nil for a new
// pair). A pair whose last apply did not reach Ready (ErrApplied, NotReady, WaitApplied, OutOfSync) is
// applied again without a content change, as Fleet's agent retries; Modified (drift found by a refresh)
// only when correctDrift is on.
func diffPair(olds *Outputs, news Spec) PairDiff {
	d := PairDiff{Detailed: map[string]pulumirpc.PropertyDiff_Kind{}}
	if olds == nil {
		d.Changes = true
		return d
	}
	// Which fields are compared, and how, is the schema's (core/model/schema/pair-spec.ts, each field's
	// diff class): zz_generated_schema.go lists them.
	for _, f := range specObjectSets {
		diffObjects(d.Detailed, f.json, f.get(&olds.Spec), f.get(&news))
	}
	for _, f := range specDiffed {
		if !reflect.DeepEqual(f.get(&olds.Spec), f.get(&news)) {
			d.Detailed[f.json] = pulumirpc.PropertyDiff_UPDATE
		}
	}
	diffHooks(d.Detailed, olds.Hooks, news.Hooks)
	d.Changes = len(d.Detailed) > 0
	if d.Changes && !news.Paused {
		heldObjects(d.Detailed, olds, news)
		// Resumed (a paused cluster's pair, a Stalled one) while its last apply had not reached Ready: the
		// update applies it again whole, as a retry does, and shows so per object (a deploy event).
		if olds.Spec.Paused && retryReason(olds.Status, news) != "" {
			reapplied(d.Detailed, olds, news)
		}
	}
	if !d.Changes && !news.Paused {
		d.Retry = retryReason(olds.Status, news)
		d.Changes = d.Retry != ""
		if d.Changes {
			reapplied(d.Detailed, olds, news)
		}
	}
	return d
}

// reapplied shows a re-apply as an update of each object it applies again: the drifted ones, else all.
func reapplied(detailed map[string]pulumirpc.PropertyDiff_Kind, olds *Outputs, news Spec) {
	again := olds.Drifted
	if olds.State != StateModified || len(again) == 0 {
		again = sortedKeys(news.set())
	}
	for _, k := range again {
		if _, ok := news.Objects[k]; ok {
			detailed["objects"+pathKey(k)] = pulumirpc.PropertyDiff_UPDATE
		} else if _, ok := news.SecretObjects[k]; ok {
			detailed["secretObjects"+pathKey(k)] = pulumirpc.PropertyDiff_UPDATE
		}
	}
}

// heldObjects adds the objects a gate held back to an update that has other reasons to apply (a
// gate that opened changes only waitFor): a pair whose last apply stopped at its gates (WaitApplied,
// OutOfSync) applied nothing of its inputs, so this apply creates what its inventory lacks and updates
// what it holds of another deploymentId. Without them the update named no object, and the pair's first
// real deploy looked like a no-op to the operations (no deploy event).
func heldObjects(detailed map[string]pulumirpc.PropertyDiff_Kind, olds *Outputs, news Spec) {
	if olds.State != StateWaitApplied && olds.State != StateOutOfSync {
		return
	}
	held := map[string]bool{}
	for _, id := range olds.Inventory {
		held[id.Key()] = true
	}
	for _, k := range sortedKeys(news.set()) {
		field := "objects"
		if _, ok := news.SecretObjects[k]; ok {
			field = "secretObjects"
		}
		base := field + pathKey(k)
		if named(detailed, base) {
			continue
		}
		switch {
		case !held[k]:
			detailed[base] = pulumirpc.PropertyDiff_ADD
		case olds.AppliedDeploymentID != news.DeploymentID:
			detailed[base] = pulumirpc.PropertyDiff_UPDATE
		}
	}
}

// named: the detailed diff already has base or a path under it.
func named(detailed map[string]pulumirpc.PropertyDiff_Kind, base string) bool {
	for p := range detailed {
		if p == base || strings.HasPrefix(p, base+".") || strings.HasPrefix(p, base+"[") {
			return true
		}
	}
	return false
}

// diffObjects records, under field, each object added, removed or changed (its fields, up to maxFieldDiffs).
func diffObjects(detailed map[string]pulumirpc.PropertyDiff_Kind, field string, olds, news map[string]DesiredObject) {
	for _, k := range unionKeys(olds, news) {
		o, inOld := olds[k]
		n, inNew := news[k]
		base := field + pathKey(k)
		switch {
		case !inOld && inNew && n.CreateOnly:
			// A chart's crds/ object a later release adds: Helm's upgrade does not create it (crds.go).
		case !inOld:
			detailed[base] = pulumirpc.PropertyDiff_ADD
		case !inNew:
			detailed[base] = pulumirpc.PropertyDiff_DELETE
		case n.CreateOnly:
			// Never updated, whatever its manifest now (Helm never upgrades a chart's crds/); only its
			// retain rule, like any object's, is the pair's to record.
			if (o.Retain == "") != (n.Retain == "") {
				detailed[base+".retain"] = pulumirpc.PropertyDiff_UPDATE
			}
		case o.CreateOnly:
			// chartCrds: CreateReplace from now on: the object is applied as it is asked for, once at least
			// (the cluster may hold any earlier version of it).
			detailed[base+".createOnly"] = pulumirpc.PropertyDiff_UPDATE
		default:
			// Whether a prune keeps the object is the change; the reason's words are core's
			// (core/desired/delete-policy.ts) and may be reworded without touching a cluster.
			if (o.Retain == "") != (n.Retain == "") {
				detailed[base+".retain"] = pulumirpc.PropertyDiff_UPDATE
			}
			if !reflect.DeepEqual(o.IgnoreDrift, n.IgnoreDrift) {
				detailed[base+".ignoreDrift"] = pulumirpc.PropertyDiff_UPDATE
			}
			if o.Manifest == nil || n.Manifest == nil {
				// A side without its manifest (its content not in this process): the digests say whether it changed.
				if digestOf(o) != digestOf(n) {
					detailed[base+".manifest"] = pulumirpc.PropertyDiff_UPDATE
				}
				continue
			}
			fields := map[string]pulumirpc.PropertyDiff_Kind{}
			diffValues(base+".manifest", o.Manifest, n.Manifest, fields)
			if len(fields) > maxFieldDiffs {
				detailed[base+".manifest"] = pulumirpc.PropertyDiff_UPDATE
			} else {
				for p, kind := range fields {
					detailed[p] = kind
				}
			}
		}
	}
}

// retryReason says why an unchanged pair is applied again, or "". Modified is only ever in the state
// after a refresh in an update (`up --refresh`, or the refresh `up` makes first of the pairs with
// correctDrift), which asks for the drift to be put back.
func retryReason(s Status, news Spec) string {
	switch {
	case s.AppliedDeploymentID != news.DeploymentID:
		return fmt.Sprintf("applied %q, not %q yet", s.AppliedDeploymentID, news.DeploymentID)
	case len(s.Refused) > 0:
		return fmt.Sprintf("%d namespace(s) refused by the API server", len(s.Refused))
	case s.State == StateReady:
		return ""
	case s.State == StateModified:
		return "modified on the cluster"
	default:
		return "last state " + s.State
	}
}

// diffValues records, under path, each field where a and b differ (maps by key, lists by index).
func diffValues(path string, a, b any, out map[string]pulumirpc.PropertyDiff_Kind) {
	if reflect.DeepEqual(a, b) {
		return
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		for _, k := range unionKeys(am, bm) {
			av, inA := am[k]
			bv, inB := bm[k]
			p := path + pathKey(k)
			switch {
			case !inA:
				out[p] = pulumirpc.PropertyDiff_ADD
			case !inB:
				out[p] = pulumirpc.PropertyDiff_DELETE
			default:
				diffValues(p, av, bv, out)
			}
		}
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList {
		for i := 0; i < len(al) || i < len(bl); i++ {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(al):
				out[p] = pulumirpc.PropertyDiff_ADD
			case i >= len(bl):
				out[p] = pulumirpc.PropertyDiff_DELETE
			default:
				diffValues(p, al[i], bl[i], out)
			}
		}
		return
	}
	out[path] = pulumirpc.PropertyDiff_UPDATE
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// pathKey is one step of an engine property path: .name, or ["any key"] quoted as JSON.
func pathKey(k string) string {
	if plainName.MatchString(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	keys := []string{}
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// Prune is what leaving the set means for the objects this pair applied before.
type Prune struct {
	Delete []InventoryID
	// "<objectKey>: <reason>" for each object a retain rule keeps on the cluster.
	Retained []string
}

// planPrune decides the prune of a pair: every inventory entry not in keep is deleted unless the
// object's last desired state carried a retain reason (the rule as it stood when it was applied).
// keep is nil for the deletion of the whole pair.
func planPrune(inventory []InventoryID, previous map[string]DesiredObject, keep map[string]DesiredObject) Prune {
	var p Prune
	for _, id := range inventory {
		k := id.Key()
		if _, ok := keep[k]; ok {
			continue
		}
		if reason := previous[k].Retain; reason != "" {
			p.Retained = append(p.Retained, k+": "+reason)
			continue
		}
		p.Delete = append(p.Delete, id)
	}
	sort.Strings(p.Retained)
	return p
}

// adopted is a new pair's starting point when it takes over an earlier version's objects: they are its
// inventory and its last desired objects, so the first apply prunes what the set no longer holds.
func adopted(spec Spec) (*Outputs, error) {
	if len(spec.Adopt) == 0 {
		return nil, nil
	}
	objects, err := unstructuredOf(spec.Adopt)
	if err != nil {
		return nil, fmt.Errorf("adopt: %w", err)
	}
	return &Outputs{Spec: Spec{Objects: spec.Adopt}, Status: Status{Inventory: inventoryOf(objects)}}, nil
}

// gateMessage is why the pair may not apply yet ("" when every gate is Ready).
func gateMessage(gates []Gate) string {
	var waiting []string
	for _, g := range gates {
		if g.State != StateReady {
			waiting = append(waiting, fmt.Sprintf("%s is %s", g.Name, orUnknown(g.State)))
		}
	}
	if len(waiting) == 0 {
		return ""
	}
	return "waiting for " + strings.Join(waiting, ", ")
}

func orUnknown(s string) string {
	if s == "" {
		return "not deployed"
	}
	return s
}

// existing keeps the entries known to exist on the cluster: those with a UID (read back, or from the
// last inventory).
func existing(ids []InventoryID) []InventoryID {
	out := make([]InventoryID, 0, len(ids))
	for _, id := range ids {
		if id.UID != "" {
			out = append(out, id)
		}
	}
	return out
}

// mergeInventory is the inventory after an apply that may have stopped halfway: what was there before
// and everything the set holds (an object never created is simply not found by a later prune, and the
// delete policy's owner labels keep a prune off an object that is not this pair's).
func mergeInventory(before []InventoryID, applied []InventoryID) []InventoryID {
	byKey := map[string]InventoryID{}
	for _, id := range before {
		byKey[id.Key()] = id
	}
	for _, id := range applied {
		if old, ok := byKey[id.Key()]; ok && id.UID == "" {
			id.UID = old.UID
		}
		byKey[id.Key()] = id
	}
	out := make([]InventoryID, 0, len(byKey))
	for _, id := range byKey {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// awaited are the kinds whose readiness a pair waits for: those the Kubernetes provider awaited when
// each object was its own resource (its awaiters), so rollout waves and dependsOn gate on the same
// readiness as before. Other kinds (custom resources among them) are not waited for, as Fleet's agent
// applies without waiting; their readiness shows in status.
var awaited = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true, "extensions/Deployment": true, "extensions/DaemonSet": true,
	"batch/Job": true, "/Pod": true, "/Service": true, "/PersistentVolumeClaim": true, "/PersistentVolume": true, "/ReplicationController": true,
	"networking.k8s.io/Ingress": true, "extensions/Ingress": true,
}

func isAwaited(group, kind string) bool { return awaited[group+"/"+kind] }
