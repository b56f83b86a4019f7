package main

// A bundle as the Helm chart Fleet's agent installs (rancher/fleet internal/helmdeployer/render and
// internal/bundlereader/style.go): the chart directory of a helm bundle; for raw YAML bundles the
// overlays applied, templates/ kept as chart templates and every other manifest under raw-yaml/
// (chart files, not templates: Helm never templates them); nothing for kustomize bundles; and a
// generated Chart.yaml when the bundle has none.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/rancher/wrangler/v3/pkg/patch"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	kustomizeyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	kyaml "sigs.k8s.io/yaml"
)

const (
	rawYAMLDir    = "raw-yaml/"
	overlayPrefix = "overlays/"
)

type file struct {
	name string
	data []byte
}

type style struct {
	chartDir      string // directory of the chart's Chart.yaml; "" when the bundle has no chart
	hasChartYAML  bool
	kustomizePath string
}

func (s style) isHelm() bool      { return s.hasChartYAML }
func (s style) isKustomize() bool { return s.kustomizePath != "" }
func (s style) isRawYAML() bool   { return !s.isHelm() && !s.isKustomize() }

func (s style) name() string {
	switch {
	case s.isHelm():
		return "helm"
	case s.isKustomize():
		return "kustomize"
	}
	return "yaml"
}

func decodeFiles(in []FileInput) ([]file, error) {
	out := make([]file, 0, len(in))
	for _, f := range in {
		data := []byte(f.Content)
		if f.Encoding == "base64" {
			var err error
			if data, err = base64.StdEncoding.DecodeString(f.Content); err != nil {
				return nil, fmt.Errorf("%s: bad base64 content: %w", f.Name, err)
			}
		}
		// Every text file, as kustomize decodes a resource whatever its name (raw manifests, values too).
		if f.Encoding != "base64" {
			if err := checkYAMLExpansion(data); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
		}
		out = append(out, file{name: f.Name, data: data})
	}
	return out, nil
}

// joinClean is Fleet's joinAndClean: path.Join without a leading slash.
func joinClean(dir, name string) string {
	return strings.TrimPrefix(path.Join(dir, name), "/")
}

func determineStyle(files []file, opts RenderOptions) style {
	chartDir := opts.Helm.Chart
	if chartDir == "" {
		chartDir = opts.Helm.Repo
	}
	chartYAML := joinClean(chartDir, "Chart.yaml")
	kustomizePath := "kustomization.yaml"
	if opts.Kustomize.Dir != "" {
		kustomizePath = joinClean(opts.Kustomize.Dir, "kustomization.yaml")
	}
	// A pulled chart (pull.go) lives under Fleet's `.chart/<sha256>/`, at its root or one directory down
	// (a chart archive's top directory).
	external := ""
	if opts.Helm.Chart != "" || opts.Helm.Repo != "" {
		external = chartPrefix(opts.Helm.Chart, opts.Helm.Repo, opts.Helm.Version) + "/"
	}
	var s style
	for _, f := range files {
		switch {
		case f.name == chartYAML:
			s.chartDir, s.hasChartYAML = path.Dir(chartYAML), true
		case isExternalChartYAML(external, f.name):
			s.chartDir, s.hasChartYAML = path.Dir(f.name), true
		case f.name == kustomizePath:
			s.kustomizePath = kustomizePath
		}
	}
	return s
}

// isExternalChartYAML is Fleet's matchesExternalChartYAML.
func isExternalChartYAML(prefix, name string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if prefix == "" || !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	return (len(parts) == 1 && parts[0] == "Chart.yaml") || (len(parts) == 2 && parts[1] == "Chart.yaml")
}

// chartFiles returns the chart's files relative to the chart root.
func chartFiles(b *BundleInput, files []file, s style, opts RenderOptions, warn func(string)) ([]*archive.BufferedFile, error) {
	var out []*archive.BufferedFile
	switch {
	case s.chartDir != "":
		prefix := s.chartDir + "/"
		if s.chartDir == "." {
			prefix = ""
		}
		for _, f := range files {
			if rest, ok := strings.CutPrefix(f.name, prefix); ok {
				out = append(out, &archive.BufferedFile{Name: rest, Data: f.data})
			}
		}
	case s.isRawYAML():
		patched, err := applyOverlays(files, opts.YAML.Overlays, warn)
		if err != nil {
			return nil, err
		}
		for _, f := range manifestFiles(patched) {
			if strings.HasPrefix(f.name, "templates/") {
				out = append(out, &archive.BufferedFile{Name: f.name, Data: f.data})
			} else {
				out = append(out, &archive.BufferedFile{Name: rawYAMLDir + f.name, Data: f.data})
			}
		}
	}
	if !s.hasChartYAML {
		out = append(out, &archive.BufferedFile{Name: "Chart.yaml", Data: generatedChartYAML(b)})
	}
	return out, nil
}

func generatedChartYAML(b *BundleInput) []byte {
	id := b.ManifestID
	if len(b.Commit) > 12 {
		id = "git-" + b.Commit[:12]
	}
	name := b.Name
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	data, _ := kyaml.Marshal(map[string]string{"apiVersion": "v2", "name": name, "version": "v0.0.0+" + id})
	return data
}

func isFleetYAML(name string) bool {
	base := path.Base(name)
	return base == "fleet.yaml" || base == "fleet.yml"
}

// manifestFiles: .yaml/.yml/.json files, not fleet.yaml, not inside a directory that has its own
// fleet.yaml or Chart.yaml (another bundle, a chart).
func manifestFiles(files []file) []file {
	var ignore []string
	for _, f := range files {
		if (isFleetYAML(f.name) || strings.HasSuffix(f.name, "/Chart.yaml")) && strings.Contains(f.name, "/") {
			ignore = append(ignore, path.Dir(f.name)+"/")
		}
	}
	var out []file
outer:
	for _, f := range files {
		if isFleetYAML(f.name) {
			continue
		}
		if !strings.HasSuffix(f.name, ".yaml") && !strings.HasSuffix(f.name, ".json") && !strings.HasSuffix(f.name, ".yml") {
			continue
		}
		for _, p := range ignore {
			if strings.HasPrefix(f.name, p) {
				continue outer
			}
		}
		out = append(out, f)
	}
	return out
}

// applyOverlays: for each overlay in order, a file in overlays/<name>/ replaces the base file of the
// same path, and `<file>_patch.<ext>` patches it (wrangler's patch.Apply: a JSON patch when the patch
// is a list, else a strategic merge patch for built-in kinds and a JSON merge patch for the others).
// The overlay directories themselves are dropped.
func applyOverlays(files []file, overlays []string, warn func(string)) ([]file, error) {
	if len(overlays) == 0 {
		return dropOverlays(files), nil
	}
	content := make(map[string][]byte, len(files))
	for _, f := range files {
		content[f.name] = f.data
	}
	for _, overlay := range overlays {
		prefix := overlayPrefix + overlay + "/"
		var names []string
		for name := range content {
			if strings.HasPrefix(name, prefix) {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			warn(fmt.Sprintf("yaml.overlays: overlay %q has no files under %s (Fleet ignores it too)", overlay, prefix))
		}
		sort.Strings(names)
		for _, name := range names {
			data := content[name]
			rel := strings.TrimPrefix(name, prefix)
			target, isPatch := patchTarget(rel)
			if !isPatch {
				content[rel] = data
				continue
			}
			base, ok := content[target]
			if !ok {
				return nil, fmt.Errorf("%s: failed to find base file %s to patch", name, target)
			}
			baseJSON, err := toJSONDoc(base)
			if err != nil {
				return nil, fmt.Errorf("failed to convert %s to json: %w", target, err)
			}
			patchJSON, err := toJSONDoc(data)
			if err != nil {
				return nil, fmt.Errorf("failed to convert %s to json: %w", name, err)
			}
			patched, err := patch.Apply(baseJSON, patchJSON)
			if err != nil {
				return nil, fmt.Errorf("%s: failed to patch %s: %w", name, target, err)
			}
			content[target] = patched
		}
	}
	out := make([]file, 0, len(content))
	for name, data := range content {
		out = append(out, file{name: name, data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return dropOverlays(out), nil
}

func dropOverlays(files []file) []file {
	out := files[:0:0]
	for _, f := range files {
		if !strings.HasPrefix(f.name, overlayPrefix) {
			out = append(out, f)
		}
	}
	return out
}

func patchTarget(name string) (string, bool) {
	base := path.Base(name)
	if !strings.Contains(base, "_patch.") {
		return "", false
	}
	return path.Join(path.Dir(name), strings.Replace(base, "_patch.", ".", 1)), true
}

// toJSONDoc reads a YAML document as a mapping, or failing that as a list (Fleet's convertToJSON,
// with kustomize's YAML reader as Fleet uses there).
// Only the first document counts, as in Fleet: a multi-document file is refused rather than cut.
func toJSONDoc(data []byte) ([]byte, error) {
	if docs := splitDocuments(data); len(docs) > 1 {
		return nil, fmt.Errorf("it holds %d YAML documents; a patched file must hold exactly one (Fleet would keep only the first)", len(docs))
	}
	var m map[string]any
	if err := kustomizeyaml.Unmarshal(data, &m); err == nil {
		return json.Marshal(m)
	}
	var l []any
	if err := kustomizeyaml.Unmarshal(data, &l); err != nil {
		return nil, err
	}
	return json.Marshal(l)
}
