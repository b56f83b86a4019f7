package main

// A chart's crds/ as Helm installs them (helm.sh/helm/v4 pkg/action install.go installCRDs), the
// GitRepo's chartCrds: Create, Fleet's agent's way: at the pair's install (no release yet) each is
// created when absent, one already there is left as it is, and Helm waits (60 s) for those it created
// to be served before anything that uses them; an upgrade neither creates nor updates them, nor does
// drift read them. chartCrds: CreateReplace leaves them in the set, applied like any object.

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crdInstallWait is Helm's wait for the CRDs it installed to be recognized.
const crdInstallWait = 60 * time.Second

// splitCreateOnly parts the set's objects into those only created at the install and those applied.
func splitCreateOnly(spec Spec, objects []*unstructured.Unstructured) (createOnly, applied []*unstructured.Unstructured) {
	set := spec.set()
	for _, o := range objects {
		if set[keyOf(o)].CreateOnly {
			createOnly = append(createOnly, o)
		} else {
			applied = append(applied, o)
		}
	}
	return createOnly, applied
}

// installCRDs creates each absent one (as this provider's field manager) and waits until those it
// created are established and their kinds the rest of the set uses are served. Its error is Helm's words.
func installCRDs(ctx context.Context, rm *ssa.ResourceManager, crds, rest []*unstructured.Unstructured) error {
	var created []*unstructured.Unstructured
	for _, o := range crds {
		if err := rm.Client().Create(ctx, o.DeepCopy(), client.FieldOwner(fieldManager)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return fmt.Errorf("failed to install CRD %s: %w", o.GetName(), err)
		}
		created = append(created, o)
	}
	if len(created) == 0 {
		return nil
	}
	set := object.ObjMetadataSet{}
	for _, o := range created {
		id, err := object.RuntimeToObjMeta(o)
		if err != nil {
			return err
		}
		set = append(set, id)
	}
	if err := rm.WaitForSetWithContext(ctx, set, ssa.WaitOptions{Interval: waitInterval, Timeout: crdInstallWait}); err != nil {
		return fmt.Errorf("the chart's crds/ were created and are not established after %s: %w", crdInstallWait, err)
	}
	return kindsServed(ctx, rm, definedKindsUsed(created, rest), crdInstallWait)
}
