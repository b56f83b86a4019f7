package main

// A chart's crds/ as Helm installs them in Fleet v0.16.0's agent (helm.sh/helm/v4 pkg/action install.go
// installCRDs), the GitRepo's chartCrds: Create: at the pair's install (no release yet) each is applied
// by a server-side apply without force, as the agent installs (so an existing CRD is brought to the
// chart's version, and a field another manager holds with another value fails the install); when the
// agent installs without server-side apply (installsWithoutServerSideApply: helm.takeOwnership, the
// GitRepo's takeOwnership, helm.force, correctDrift.force), each is only created when absent.
// An upgrade neither creates nor updates them, nor does drift read them. Helm waits for them only with
// helm.timeoutSeconds (60 s); here always, until established and served (60 s at most), before anything
// that uses them, hooks included. chartCrds: CreateReplace leaves them in the set, applied like any object.

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

// installCRDs installs them as Helm's install does, and waits until those it wrote are established and
// their kinds the rest of the set or its hooks use are served. Its error is Helm's words.
func installCRDs(ctx context.Context, rm *ssa.ResourceManager, spec Spec, crds, rest []*unstructured.Unstructured) error {
	var written []*unstructured.Unstructured
	for _, o := range crds {
		if spec.InstallsWithoutServerSideApply {
			if err := rm.Client().Create(ctx, o.DeepCopy(), client.FieldOwner(fieldManager)); err != nil {
				if apierrors.IsAlreadyExists(err) {
					continue
				}
				return fmt.Errorf("failed to install CRD %s: %w", o.GetName(), err)
			}
			written = append(written, o)
			continue
		}
		changed, err := applyUnforced(ctx, rm.Client(), o)
		if err != nil {
			return fmt.Errorf("failed to install CRD %s: %w", o.GetName(), err)
		}
		if changed {
			written = append(written, o)
		}
	}
	if len(written) == 0 {
		return nil
	}
	set := object.ObjMetadataSet{}
	for _, o := range written {
		id, err := object.RuntimeToObjMeta(o)
		if err != nil {
			return err
		}
		set = append(set, id)
	}
	if err := rm.WaitForSetWithContext(ctx, set, ssa.WaitOptions{Interval: waitInterval, Timeout: crdInstallWait}); err != nil {
		return fmt.Errorf("the chart's crds/ were written and are not established after %s: %w", crdInstallWait, err)
	}
	return kindsServed(ctx, rm, definedKindsUsed(written, append(rest, hookObjects(spec.Hooks)...)), crdInstallWait)
}

// hookObjects are the hooks' objects, those that decode (a hook that does not fails at its phase).
func hookObjects(hooks []Hook) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, h := range hooks {
		if m, err := decodeManifest([]byte(h.Manifest)); err == nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

// applyUnforced is a server-side apply as this provider's field manager that does not force: a field
// another manager holds with another value fails it, as Helm's install (ForceConflicts off) does. It
// says whether the object changed (a new resourceVersion).
func applyUnforced(ctx context.Context, c client.Client, o *unstructured.Unstructured) (bool, error) {
	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(o.GroupVersionKind())
	had := c.Get(ctx, client.ObjectKeyFromObject(o), before) == nil
	patch := o.DeepCopy()
	patch.SetManagedFields(nil)
	patch.SetResourceVersion("")
	if err := c.Patch(ctx, patch, client.Apply, client.FieldOwner(fieldManager)); err != nil { //nolint:staticcheck // the typed Apply needs apply configurations; an unstructured object has none
		return false, err
	}
	return !had || patch.GetResourceVersion() != before.GetResourceVersion(), nil
}
