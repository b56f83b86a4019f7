package main

// Render mode (the provider's renderYamlToDirectory): the pair's objects are written as YAML files in
// the layout the Kubernetes provider uses (0-crd/ for CRDs, 1-manifest/ for the rest, one file per
// object named <apiVersion>-<kind>-<namespace>-<name>.yaml), and nothing is applied.

import (
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// renderPath is an object's file under the render directory.
func renderPath(dir string, manifest map[string]any) string {
	apiVersion, _ := manifest["apiVersion"].(string)
	kind, _ := manifest["kind"].(string)
	meta, _ := manifest["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	if namespace == "" {
		namespace = "default"
	}
	sub := "1-manifest"
	if kind == "CustomResourceDefinition" {
		sub = "0-crd"
	}
	file := strings.Join([]string{strings.ReplaceAll(apiVersion, "/", "_"), strings.ToLower(kind), namespace, name}, "-") + ".yaml"
	return filepath.Join(dir, sub, file)
}

// renderPair writes the set and removes the files of objects that left it (under the same retain rules).
func renderPair(dir string, prev *Outputs, spec Spec) Status {
	st, previous := carriedStatus(prev)
	if spec.Paused {
		return paused(st)
	}
	objects, err := spec.unstructuredObjects()
	if err != nil {
		st.State, st.Messages = StateErrApplied, []string{err.Error()}
		return st
	}
	set := spec.set()
	for _, k := range sortedKeys(set) {
		if err := writeManifest(dir, set[k].Manifest); err != nil {
			st.State, st.Messages = StateErrApplied, []string{err.Error()}
			return st
		}
	}
	prune := planPrune(st.Inventory, previous, set)
	for _, id := range prune.Delete {
		_ = os.Remove(renderPath(dir, previous[id.Key()].Manifest))
	}
	st.Inventory = inventoryOf(objects)
	st.Retained = prune.Retained
	st.AppliedDeploymentID = spec.DeploymentID
	st.Revision++
	st.State = StateReady
	return st
}

func writeManifest(dir string, manifest map[string]any) error {
	path := renderPath(dir, manifest)
	text, err := yaml.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, text, 0o644)
}

// unrenderPair removes the pair's files, except those a retain rule keeps.
func unrenderPair(dir string, olds Outputs) {
	set := olds.set()
	for _, id := range planPrune(olds.Inventory, set, nil).Delete {
		if o, ok := set[id.Key()]; ok {
			_ = os.Remove(renderPath(dir, o.Manifest))
		}
	}
}
