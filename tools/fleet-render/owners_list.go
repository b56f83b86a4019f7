package main

// Looking up many objects of one kind in one namespace by listing it: a new bundle of 500 ConfigMaps is
// one request (its namespace is usually new and empty) where it was 500 GETs. The list is bounded in
// pages; a namespace holding more than that is looked up object by object instead.

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

const (
	// listThreshold: from this many refs of one kind in one namespace, one list replaces their GETs.
	listThreshold = 16
	// listPageSize and maxListPages bound a list: past them the group's objects are read one by one.
	listPageSize = 500
	maxListPages = 10
)

type listGroup struct {
	resource  schema.GroupVersionResource
	namespace string
}

// listInGroups looks up, by listing, the refs that come in groups of listThreshold or more: it returns
// what it found (absent objects as nil) by ref index, and the indexes left to read one by one.
func listInGroups(ctx context.Context, mapper meta.RESTMapper, client metadata.Interface, refs []ObjectRef) (map[int]*LiveObject, []int, error) {
	groups := map[listGroup][]int{}
	var rest []int
	for i, ref := range refs {
		g, ok := listGroupOf(mapper, ref)
		if !ok {
			rest = append(rest, i) // unknown kinds and unmapped versions are readObject's to judge
			continue
		}
		groups[g] = append(groups[g], i)
	}
	found := map[int]*LiveObject{}
	for g, indexes := range groups {
		if len(indexes) < listThreshold {
			rest = append(rest, indexes...)
			continue
		}
		byName, complete, err := listNames(ctx, client, g)
		if err != nil {
			return nil, nil, fmt.Errorf("listing %s in %q: %w", g.resource.String(), g.namespace, err)
		}
		if !complete {
			rest = append(rest, indexes...)
			continue
		}
		for _, i := range indexes {
			found[i] = byName[refs[i].Name] // nil: not there
		}
	}
	return found, rest, nil
}

func listGroupOf(mapper meta.RESTMapper, ref ObjectRef) (listGroup, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return listGroup{}, false
	}
	mapping, err := mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return listGroup{}, false
	}
	g := listGroup{resource: mapping.Resource}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		g.namespace = ref.Namespace
	}
	return g, true
}

// listNames lists a group's metadata in pages; complete is false past maxListPages.
func listNames(ctx context.Context, client metadata.Interface, g listGroup) (map[string]*LiveObject, bool, error) {
	var resource metadata.ResourceInterface = client.Resource(g.resource)
	if g.namespace != "" {
		resource = client.Resource(g.resource).Namespace(g.namespace)
	}
	byName := map[string]*LiveObject{}
	opts := metav1.ListOptions{Limit: listPageSize}
	for page := 0; page < maxListPages; page++ {
		list, err := resource.List(ctx, opts)
		if apierrors.IsNotFound(err) {
			return byName, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		for i := range list.Items {
			byName[list.Items[i].Name] = liveOf(&list.Items[i])
		}
		if list.Continue == "" {
			return byName, true, nil
		}
		opts.Continue = list.Continue
	}
	return nil, false, nil
}

func liveOf(obj *metav1.PartialObjectMetadata) *LiveObject {
	live := &LiveObject{Labels: obj.Labels, Annotations: obj.Annotations}
	for _, m := range obj.ManagedFields {
		live.Managers = append(live.Managers, m.Manager)
	}
	return live
}
