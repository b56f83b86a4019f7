package main

// A cluster's setup holds the namespaces of every team's bundles beside its agent and the operator's
// Secrets. Applied as one set, one namespace the API server refused (an admission webhook, a quota, a
// name another owner holds) stopped every other namespace, the agent and the Secrets, and so every
// team's bundles on the cluster. So a setup applies each namespace on its own first; a refused one is
// left out with what lives in it, its refusal is reported by name (Status.Refused) to the pairs that
// need it (Spec.NamespacesRefused, which the program takes from the setup's messages), and the rest of the set is applied as before.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/ssa"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// namespacesApart is what applying a setup's namespaces each on its own left: the rest of the set to
// apply (without the namespaces applied and without what lives in a refused one), the namespaces'
// entries, the refusals by namespace and the objects left out because their namespace was refused.
type namespacesApart struct {
	rest    []*unstructured.Unstructured
	entries []ssa.ChangeSetEntry
	refused map[string]string
	leftOut []string
}

// applyNamespacesApart applies each Namespace of objects on its own, directAtOnce at a time, as ssa
// applies an object (its dry run first: a refusal writes nothing).
func applyNamespacesApart(ctx context.Context, rm *ssa.ResourceManager, objects []*unstructured.Unstructured, opts ssa.ApplyOptions) namespacesApart {
	out := namespacesApart{refused: map[string]string{}}
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(directAtOnce)
	for _, o := range objects {
		if !isNamespace(o) {
			continue
		}
		g.Go(func() error {
			entry, err := rm.Apply(ctx, o.DeepCopy(), opts)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.refused[o.GetName()] = err.Error()
			} else if entry != nil {
				out.entries = append(out.entries, *entry)
			}
			return nil
		})
	}
	_ = g.Wait()
	out.rest, out.leftOut = outsideRefused(objects, out.refused)
	return out
}

// outsideRefused splits the set after its namespaces were applied: what is still to apply (neither a
// namespace nor in a refused one) and the keys of what is left out because its namespace was refused.
func outsideRefused(objects []*unstructured.Unstructured, refused map[string]string) (rest []*unstructured.Unstructured, leftOut []string) {
	for _, o := range objects {
		switch {
		case isNamespace(o):
		case refused[o.GetNamespace()] != "":
			leftOut = append(leftOut, keyOf(o))
		default:
			rest = append(rest, o)
		}
	}
	return rest, leftOut
}

func isNamespace(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Namespace" && groupOf(o.GetAPIVersion()) == ""
}

// namespaceRefusalLine is a setup's message for a namespace the API server refused. The program reads
// these lines (core/desired/namespaces.ts namespacesRefusedIn), not the structured Refused: a stored
// output that an earlier version did not write is unknown to a preview, and every pair on the cluster
// would then show as changing; messages are in every stored status.
func namespaceRefusalLine(namespace, why string) string {
	return fmt.Sprintf("namespace %s was refused by the API server: %s", namespace, why)
}

// refusalLines are a setup's messages for its refused namespaces, sorted.
func refusalLines(refused map[string]string) []string {
	lines := make([]string, 0, len(refused))
	for _, ns := range sortedNames(refused) {
		lines = append(lines, namespaceRefusalLine(ns, refused[ns]))
	}
	return lines
}

// refusedNamespaceMessages are a pair's messages when a namespace it needs was refused: each named, with the server's words.
func refusedNamespaceMessages(refused map[string]string) []string {
	msgs := make([]string, 0, len(refused))
	for _, name := range sortedNames(refused) {
		msgs = append(msgs, fmt.Sprintf("namespace %s was refused by the API server, so nothing was applied: %s", name, refused[name]))
	}
	return msgs
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// leftOutMessages are a setup's messages for its own objects (the agent's, the operator's Secrets) that
// live in a refused namespace.
func leftOutMessages(leftOut []string, refused map[string]string) []string {
	msgs := make([]string, 0, len(leftOut))
	for _, k := range leftOut {
		ns := strings.Split(k, "/")[2]
		msgs = append(msgs, fmt.Sprintf("%s not applied: its namespace %s was refused: %s", k, ns, refused[ns]))
	}
	return msgs
}

// isSetupURN: the resource is a cluster's setup (its type is the last part of the URN's qualified type).
func isSetupURN(urn string) bool {
	parts := strings.Split(urn, "::")
	if len(parts) < 4 {
		return false
	}
	qualified := parts[len(parts)-2]
	return qualified == clusterSetupTk || strings.HasSuffix(qualified, "$"+clusterSetupTk)
}
