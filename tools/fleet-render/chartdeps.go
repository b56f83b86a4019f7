package main

// Chart dependencies as Fleet resolves them: when a local chart's dependencies are not all in its
// charts/ directory, Fleet runs Helm's dependency update (unless helm.disableDependencyUpdate). Core
// reads each dependency's chart (a file:// one from the repository, a remote one pulled as remote
// charts are) and hands its files in under <chart>/.chart-deps/<name>/; here each missing one is added
// to the chart, after the check Helm's update makes: its version must satisfy the constraint.

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

const chartDepsDir = ".chart-deps/"

// splitDependencies takes the resolved dependencies' files out of a chart's files, by dependency name.
func splitDependencies(files []*archive.BufferedFile) ([]*archive.BufferedFile, map[string][]*archive.BufferedFile) {
	var chart []*archive.BufferedFile
	deps := map[string][]*archive.BufferedFile{}
	for _, f := range files {
		rest, ok := strings.CutPrefix(f.Name, chartDepsDir)
		if !ok {
			chart = append(chart, f)
			continue
		}
		name, inner, ok := strings.Cut(rest, "/")
		if ok && inner != "" {
			deps[name] = append(deps[name], &archive.BufferedFile{Name: inner, Data: f.Data})
		}
	}
	return chart, deps
}

// addDependencies adds to the chart each dependency it lacks that core resolved.
func addDependencies(chart *chartv2.Chart, resolved map[string][]*archive.BufferedFile) error {
	for _, d := range chart.Metadata.Dependencies {
		files, ok := resolved[d.Name]
		if !ok || hasSubchart(chart, d.Name) {
			continue
		}
		sub, err := loader.LoadFiles(files)
		if err != nil {
			return fmt.Errorf("chart %s: dependency %s (%s): %w", chart.Name(), d.Name, d.Repository, err)
		}
		if d.Version != "" {
			constraint, err := semver.NewConstraint(d.Version)
			if err != nil {
				return fmt.Errorf("chart %s: dependency %s has an invalid version constraint %q: %w", chart.Name(), d.Name, d.Version, err)
			}
			if v, err := semver.NewVersion(sub.Metadata.Version); err != nil || !constraint.Check(v) {
				return fmt.Errorf("chart %s: dependency %s (%s) is version %s, which does not satisfy %s", chart.Name(), d.Name, d.Repository, sub.Metadata.Version, d.Version)
			}
		}
		chart.AddDependency(sub)
	}
	return nil
}

func hasSubchart(chart *chartv2.Chart, name string) bool {
	for _, c := range chart.Dependencies() {
		if c.Name() == name {
			return true
		}
	}
	return false
}
