package main

// Render mode (the provider's renderYamlToDirectory): the pair's objects are written as YAML files in
// the layout the Kubernetes provider uses (0-crd/ for CRDs, 1-manifest/ for the rest), one file per
// object named so that two objects never share one (render_name.go), and nothing is applied. A file is
// only overwritten or removed when it holds the same object (apiVersion, kind, namespace, name): a
// file another object owns (a case-insensitive file system, a hand-placed file) is refused, never
// replaced or pruned. Files of the earlier, colliding names are moved to the new ones the same way.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// renderSubdir is the directory an object's file is in.
func renderSubdir(dir, kind string) string {
	if kind == "CustomResourceDefinition" {
		return filepath.Join(dir, "0-crd")
	}
	return filepath.Join(dir, "1-manifest")
}

// renderPath is an object's file under the render directory.
func renderPath(dir string, manifest map[string]any) string {
	id := identityOf(manifest)
	return filepath.Join(renderSubdir(dir, id.Kind), renderFileName(id))
}

// legacyRenderPath is where earlier versions wrote the object, or "" when that name was not one file.
func legacyRenderPath(dir string, manifest map[string]any) string {
	id := identityOf(manifest)
	name := legacyRenderFileName(id)
	if name != filepath.Base(name) || name == "." || name == ".." {
		return ""
	}
	return filepath.Join(renderSubdir(dir, id.Kind), name)
}

// fileHolds: the file at path is absent (false, nil), holds the object (true, nil), or holds another
// one or something unreadable (false, error saying which).
func fileHolds(path string, id renderIdentity) (bool, error) {
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(text, &m); err != nil || m == nil {
		return false, fmt.Errorf("%s holds no object pulumi-fleet wrote: not overwritten", path)
	}
	if other := identityOf(m); other != id {
		return false, fmt.Errorf("%s holds %s %s/%s, not %s %s/%s: not overwritten", path, other.Kind, other.Namespace, other.Name, id.Kind, id.Namespace, id.Name)
	}
	return true, nil
}

// removeOwnFile removes the object's file at path if it holds that object, and the directories a long
// name made, once empty.
func removeOwnFile(path string, id renderIdentity) {
	if path == "" {
		return
	}
	if own, _ := fileHolds(path, id); !own {
		return
	}
	_ = os.Remove(path)
	// A long name's directories (each ending in "+"), innermost first, while empty.
	for parent := filepath.Dir(path); strings.HasSuffix(parent, "+"); parent = filepath.Dir(parent) {
		if os.Remove(parent) != nil {
			break
		}
	}
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
	var before []Hook
	if prev != nil {
		before = prev.Hooks
	}
	if err := renderHooks(dir, before, spec.Hooks); err != nil {
		st.State, st.Messages = StateErrApplied, []string{err.Error()}
		return st
	}
	prune := planPrune(st.Inventory, withHooksKept(previous, spec.Hooks), set)
	for _, id := range prune.Delete {
		removeRendered(dir, previous[id.Key()].identity(id.Key()))
	}
	st.Inventory = inventoryOf(objects)
	st.Retained = prune.Retained
	st.AppliedDeploymentID = spec.DeploymentID
	st.Revision++
	st.State = StateReady
	return st
}

func writeManifest(dir string, manifest map[string]any) error {
	if err := writeManifestAt(renderPath(dir, manifest), manifest); err != nil {
		return err
	}
	// Its file under the earlier name, if that file is its own.
	removeOwnFile(legacyRenderPath(dir, manifest), identityOf(manifest))
	return nil
}

// writeManifestAt writes the object's file at path, unless the file there holds another object.
func writeManifestAt(path string, manifest map[string]any) error {
	id := identityOf(manifest)
	if _, err := fileHolds(path, id); err != nil {
		return err
	}
	text, err := yaml.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, text, 0o644)
}

// removeRendered removes the object's file, under its name and under the earlier one, only where the
// file holds that object.
func removeRendered(dir string, manifest map[string]any) {
	id := identityOf(manifest)
	removeOwnFile(renderPath(dir, manifest), id)
	removeOwnFile(legacyRenderPath(dir, manifest), id)
}

// unrenderPair removes the pair's files, except those a retain rule keeps.
func unrenderPair(dir string, olds Outputs) {
	set := olds.set()
	for _, id := range planPrune(olds.Inventory, set, nil).Delete {
		if o, ok := set[id.Key()]; ok {
			removeRendered(dir, o.identity(id.Key()))
		}
	}
	// Its hooks' files go with it (render mode has no release to keep them for).
	_ = renderHooks(dir, olds.Hooks, nil)
}

// renderHooks writes the pair's hooks apart from its set, each under hooks/<event>/ for every phase it
// runs at (what that phase would create; nothing runs them), and removes the files of hooks it no
// longer has.
func renderHooks(dir string, before, after []Hook) error {
	// Each hook's file per event: from its manifest, or, kept in its content (the earlier hooks, whose
	// content this process may not hold), from its identity; an earlier one that does not decode is skipped.
	files := func(hooks []Hook, strict bool) (map[string]map[string]any, error) {
		out := map[string]map[string]any{}
		for _, h := range hooks {
			var m map[string]any
			if h.Manifest == "" && h.Object != "" {
				m = DesiredObject{APIVersion: h.APIVersion}.identity(h.Object)
			} else if decoded, err := decodeManifest([]byte(h.Manifest)); err == nil {
				m = decoded
			} else if strict {
				return nil, fmt.Errorf("a hook's manifest: %w", err)
			} else {
				continue
			}
			for _, event := range h.Events {
				out[renderPath(filepath.Join(dir, "hooks", event), m)] = m
			}
		}
		return out, nil
	}
	old, _ := files(before, false)
	now, err := files(after, true)
	if err != nil {
		return err
	}
	for path, m := range old {
		if _, kept := now[path]; !kept {
			removeOwnFile(path, identityOf(m))
		}
	}
	for path, m := range now {
		if err := writeManifestAt(path, m); err != nil {
			return err
		}
	}
	return nil
}
