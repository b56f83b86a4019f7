package main

// Kustomize as Fleet's post-render step (internal/helmdeployer/kustomize): an in-memory file system
// holding only the bundle's files plus the rendered manifests as <dir>/fleet-manifests.yaml,
// prepended to the kustomization's resources; krusty with root-only loading and plugins disabled.
// Nothing outside the bundle exists for it, so `../` paths, generators and components that reach out
// of the bundle fail.

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/yaml"
)

const (
	kustomizationYAML = "kustomization.yaml"
	manifestsYAML     = "fleet-manifests.yaml"
)

func kustomizeBundle(files []file, manifests []byte, dir string) ([]map[string]any, bool, error) {
	if dir == "" {
		dir = "."
	}
	fs := filesys.MakeEmptyDirInMemory()
	for _, f := range files {
		if _, err := fs.AddFile(f.name, f.data); err != nil {
			return nil, false, err
		}
	}
	if _, err := fs.AddFile(path.Join(dir, manifestsYAML), manifests); err != nil {
		return nil, false, err
	}
	if !fs.Exists(path.Join(dir, kustomizationYAML)) {
		return nil, false, nil
	}
	if len(manifests) > 0 {
		if err := addManifestsResource(fs, dir); err != nil {
			return nil, false, err
		}
	}
	k := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: types.LoadRestrictionsRootOnly,
		PluginConfig:     types.DisabledPluginConfig(),
	})
	resMap, err := k.Run(fs, dir)
	if err != nil {
		// A remote base makes kustomize clone it with git: the sandbox gives it neither git nor the network.
		if strings.Contains(err.Error(), "no 'git' program") {
			err = fmt.Errorf("a remote kustomize base is not fetched: GitRepo content may not make the runner run git or reach the network (vendor the base into the repository): %w", err)
		}
		return nil, true, err
	}
	var out []map[string]any
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, true, err
		}
		out = append(out, m)
	}
	return out, true, nil
}

func addManifestsResource(fs filesys.FileSystem, dir string) error {
	name := path.Join(dir, kustomizationYAML)
	data, err := fs.ReadFile(name)
	if err != nil {
		return err
	}
	doc := map[string]any{}
	if err := kyaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	var resources []string
	if list, ok := doc["resources"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				resources = append(resources, s)
			}
		}
	}
	if slices.Contains(resources, manifestsYAML) {
		return nil
	}
	doc["resources"] = append([]string{manifestsYAML}, resources...)
	if data, err = kyaml.Marshal(doc); err != nil {
		return err
	}
	return fs.WriteFile(name, data)
}
