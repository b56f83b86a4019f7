package main

// One bundle for one set of merged options, rendered as Fleet's agent renders it: the bundle as a
// chart, Helm's install in client-only dry-run mode (what `fleet test` runs), and Fleet's post-render
// step (kustomize at kustomize.dir over the rendered manifests, then the raw YAML files).

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/action"
	ci "helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	ri "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Fleet's `fleet test` default when no cluster version is known (internal/helmdeployer/template.go).
const defaultKubeVersion = "v1.25.0"

const crdKind = "CustomResourceDefinition"

func renderJob(job RenderJob, b *BundleInput, capabilities map[string]*Capabilities) (result RenderResult) {
	var warnings []string
	warn := func(w string) { warnings = append(warnings, w) }
	defer func() {
		if r := recover(); r != nil {
			result = RenderResult{Error: fmt.Sprintf("internal error rendering the bundle: %v", r)}
		}
		result.Warnings = warnings
	}()
	if b == nil {
		return RenderResult{Error: fmt.Sprintf("unknown bundle %q in the request", job.Bundle)}
	}
	var caps *Capabilities
	if job.Capabilities != "" {
		if caps = capabilities[job.Capabilities]; caps == nil {
			return RenderResult{Error: fmt.Sprintf("unknown capabilities %q in the request", job.Capabilities)}
		}
	}
	var lookups *lookupTable
	if caps != nil && job.Lookups != nil {
		lookups = newLookupTable(*job.Lookups, caps.APIVersions)
		// What the templates asked is reported whether or not the render succeeds: a template may fail
		// on an answer it did not get yet.
		defer func() { result.Lookups = lookups.keys() }()
	}
	if len(job.ValuesFrom) > 0 {
		values, err := withValuesFrom(job.Options.Helm.Values, job.ValuesFrom)
		if err != nil {
			return RenderResult{Error: err.Error()}
		}
		job.Options.Helm.Values = values
	}
	files, err := decodeFiles(b.Files)
	if err != nil {
		return RenderResult{Error: err.Error()}
	}
	st := determineStyle(files, job.Options)
	if (job.Options.Helm.Chart != "" || job.Options.Helm.Repo != "") && !st.hasChartYAML {
		chart := job.Options.Helm.Chart
		if chart == "" {
			chart = job.Options.Helm.Repo
		}
		return RenderResult{Error: fmt.Sprintf("helm.chart: chart %s not found in the bundle (no %s)", chart, joinClean(chart, "Chart.yaml"))}
	}
	chartFileList, err := chartFiles(b, files, st, job.Options, warn)
	if err != nil {
		return RenderResult{Error: err.Error()}
	}
	chartFileList, resolvedDeps := splitDependencies(chartFileList)
	chart, err := loader.LoadFiles(chartFileList)
	if err != nil {
		return RenderResult{Error: fmt.Sprintf("loading the chart: %v", err)}
	}
	// Helm's install renders without a dependency missing from charts/. Fleet runs Helm's dependency
	// update when it reads the bundle unless disableDependencyUpdate: core resolved the missing ones
	// (chartdeps.go); one still missing is an error, or with disableDependencyUpdate the same omission
	// Fleet makes, said as a warning.
	if deps := chart.Metadata.Dependencies; len(deps) > 0 {
		if !job.Options.Helm.DisableDependencyUpdate {
			if err := addDependencies(chart, resolvedDeps); err != nil {
				return RenderResult{Error: err.Error()}
			}
		}
		if err := action.CheckDependencies(chart, toCharterDeps(deps)); err != nil {
			if !job.Options.Helm.DisableDependencyUpdate {
				return RenderResult{Error: fmt.Sprintf("chart %s: %v: neither in its charts/ directory nor resolvable from its repository (file:// inside the GitRepo, or a chart repository URL)", chart.Name(), err)}
			}
			warn(fmt.Sprintf("%v: rendered without them, as Fleet does with helm.disableDependencyUpdate", err))
		}
	}

	rel, err := helmTemplate(job, caps, lookups, chart, &postRender{
		bundleFiles:        files,
		chart:              chart,
		kustomizeDir:       job.Options.Kustomize.Dir,
		targetNamespace:    job.Options.TargetNamespace,
		deleteCRDResources: job.Options.DeleteCRDResources,
		warn:               warn,
	})
	if err != nil {
		return RenderResult{Error: err.Error()}
	}
	objects, err := toObjects([]byte(rel.Manifest))
	if err != nil {
		return RenderResult{Error: fmt.Sprintf("reading the rendered manifests: %v", err)}
	}
	crds, err := chartCRDs(chart)
	if err != nil {
		return RenderResult{Error: err.Error()}
	}
	hooks, err := releaseHooks(rel)
	if err != nil {
		return RenderResult{Error: err.Error()}
	}
	return RenderResult{Objects: objects, CRDs: crds, Hooks: hooks, Style: st.name()}
}

func helmTemplate(job RenderJob, caps *Capabilities, lookups *lookupTable, chart *chartv2.Chart, pr *postRender) (*releasev1.Release, error) {
	cfg := &action.Configuration{}
	cfg.SetLogger(nil)
	install := action.NewInstall(cfg)
	if caps != nil {
		// A live cluster's capabilities, whole, as Fleet's agent builds them (Helm's defaults replaced,
		// not extended). A client-only install would add Helm's defaults back, so this is a server dry
		// run against no server: a client that prints nothing, releases in memory, no REST client.
		cfg.Capabilities = common.DefaultCapabilities.Copy()
		cfg.Capabilities.APIVersions = common.VersionSet(caps.APIVersions)
		cfg.Capabilities.KubeVersion = common.KubeVersion{Version: caps.KubeVersion.Version, Major: caps.KubeVersion.Major, Minor: caps.KubeVersion.Minor}
		cfg.KubeClient = &kubefake.PrintingKubeClient{Out: io.Discard}
		mem := driver.NewMemory()
		mem.SetNamespace(job.Namespace)
		cfg.Releases = storage.Init(mem)
		if lookups != nil {
			cfg.RESTClientGetter = lookups.restClientGetter()
		}
		install.DryRunStrategy = action.DryRunServer
		if job.Revision > 0 {
			return helmUpgrade(job, cfg, chart, pr)
		}
	} else {
		// Render mode, as `fleet test` (and Helm's --kube-version/--api-versions): Helm's defaults.
		kubeVersion := job.KubeVersion
		if kubeVersion == "" {
			kubeVersion = defaultKubeVersion
		}
		v, err := semver.NewVersion(kubeVersion)
		if err != nil {
			return nil, fmt.Errorf("invalid kubeVersion: %s", kubeVersion)
		}
		install.KubeVersion = &common.KubeVersion{
			Version: v.String(),
			Major:   strconv.FormatUint(v.Major(), 10),
			Minor:   strconv.FormatUint(v.Minor(), 10),
		}
		install.APIVersions = common.VersionSet(job.APIVersions)
		install.DryRunStrategy = action.DryRunClient
	}
	install.ReleaseName = job.ReleaseName
	install.Namespace = job.Namespace
	install.CreateNamespace = true
	install.Replace = true
	install.EnableDNS = !job.Options.Helm.DisableDNS
	install.SkipSchemaValidation = job.Options.Helm.SkipSchemaValidation
	install.WaitStrategy = kube.HookOnlyStrategy
	install.PostRenderer = pr
	return runRelease(job, func(values map[string]any) (ri.Releaser, error) { return install.Run(chart, values) })
}

// runRelease runs an install or upgrade with the job's values and returns its release.
func runRelease(job RenderJob, run func(values map[string]any) (ri.Releaser, error)) (*releasev1.Release, error) {
	values := job.Options.Helm.Values
	if values == nil {
		values = map[string]any{}
	}
	released, err := run(values)
	if err != nil {
		return nil, err
	}
	rel, ok := released.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("unexpected release type %T", released)
	}
	return rel, nil
}

// helmUpgrade renders a pair deployed before as Fleet's agent upgrades its release: the last release
// (revision job.Revision, deployed) stands in the in-memory storage, and Helm's upgrade renders the
// next one as a server dry run (.Release.IsUpgrade true, .Release.Revision job.Revision+1).
func helmUpgrade(job RenderJob, cfg *action.Configuration, chart *chartv2.Chart, pr *postRender) (*releasev1.Release, error) {
	last := &releasev1.Release{Name: job.ReleaseName, Namespace: job.Namespace, Version: job.Revision, Chart: chart,
		Info: &releasev1.Info{Status: rcommon.StatusDeployed}}
	if err := cfg.Releases.Create(last); err != nil {
		return nil, err
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = job.Namespace
	upgrade.DryRunStrategy = action.DryRunServer
	upgrade.EnableDNS = !job.Options.Helm.DisableDNS
	upgrade.SkipSchemaValidation = job.Options.Helm.SkipSchemaValidation
	upgrade.WaitStrategy = kube.HookOnlyStrategy
	upgrade.PostRenderer = pr
	return runRelease(job, func(values map[string]any) (ri.Releaser, error) { return upgrade.Run(job.ReleaseName, chart, values) })
}

// chartCRDs: the crds/ files of the chart and its subcharts, which Helm installs before anything
// else and never templates or post-renders.
func chartCRDs(chart *chartv2.Chart) ([]map[string]any, error) {
	var out []map[string]any
	for _, crd := range chart.CRDObjects() {
		objs, err := toObjects(crd.File.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", crd.Filename, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

func releaseHooks(rel *releasev1.Release) ([]Hook, error) {
	var out []Hook
	for _, h := range rel.Hooks {
		objs, err := toObjects([]byte(h.Manifest))
		if err != nil {
			return nil, fmt.Errorf("hook %s: %w", h.Path, err)
		}
		events := make([]string, 0, len(h.Events))
		for _, e := range h.Events {
			events = append(events, string(e))
		}
		policies := make([]string, 0, len(h.DeletePolicies))
		for _, p := range h.DeletePolicies {
			policies = append(policies, string(p))
		}
		for _, o := range objs {
			out = append(out, Hook{Events: events, Weight: h.Weight, DeletePolicies: policies, Object: o})
		}
	}
	return out, nil
}

// postRender is Fleet's post-render step (internal/helmdeployer/postrender.go), without the
// objectset labels Fleet's agent uses for its own bookkeeping (pulumi-fleet labels objects itself).
type postRender struct {
	bundleFiles        []file
	chart              *chartv2.Chart
	kustomizeDir       string
	targetNamespace    string
	deleteCRDResources bool
	warn               func(string)
}

func (p *postRender) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	data := rendered.Bytes()
	objs, err := toObjects(data)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		data = nil
	}
	// As Fleet: kustomize runs only when the bundle holds a kustomization somewhere.
	processed := false
	if p.kustomizable() {
		kustomized, ok, err := kustomizeBundle(p.bundleFiles, data, p.kustomizeDir)
		if err != nil {
			return nil, err
		}
		if ok {
			objs, processed = kustomized, true
		}
	}
	// Fleet skips a kustomize.dir without a kustomization without a word; say it.
	if dir := path.Clean(p.kustomizeDir); p.kustomizeDir != "" && dir != "." && !processed {
		where := "has no kustomization.yaml in the bundle"
		if path.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") {
			where = "is outside the bundle"
		}
		p.warn(fmt.Sprintf("kustomize.dir %q %s: nothing is kustomized (Fleet ignores it without a word)", p.kustomizeDir, where))
	}
	var raw []rawFile
	for _, f := range p.chart.Files {
		if strings.HasPrefix(f.Name, rawYAMLDir) {
			raw = append(raw, rawFile{name: strings.TrimPrefix(f.Name, rawYAMLDir), data: f.Data})
		}
	}
	sort.Slice(raw, func(i, j int) bool { return raw[i].name < raw[j].name })
	rawObjs, err := rawYAMLObjects(raw, p.warn)
	if err != nil {
		return nil, err
	}
	objs = append(objs, rawObjs...)
	for _, o := range objs {
		u := unstructured.Unstructured{Object: o}
		if !p.deleteCRDResources && u.GetKind() == crdKind {
			annotations := u.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[kube.ResourcePolicyAnno] = kube.KeepPolicy
			u.SetAnnotations(annotations)
		}
		if p.targetNamespace != "" {
			u.SetNamespace(p.targetNamespace)
		}
	}
	out, err := objectsToYAML(objs)
	return bytes.NewBuffer(out), err
}

func (p *postRender) kustomizable() bool {
	for _, f := range p.bundleFiles {
		if strings.HasSuffix(f.name, "kustomization.yaml") || strings.HasSuffix(f.name, "kustomization.yml") || strings.HasSuffix(f.name, "Kustomization") {
			return true
		}
	}
	return false
}

func toCharterDeps(deps []*chartv2.Dependency) []ci.Dependency {
	out := make([]ci.Dependency, len(deps))
	for i, d := range deps {
		out[i] = d
	}
	return out
}
