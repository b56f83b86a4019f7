package main

// A chart version resolved without a download, as Fleet's HelmOp controller does before anything
// deploys (rancher/fleet internal/bundlereader/charturl.go: ChartVersion, GetOCITag), so every cluster
// gets the same exact version even when the repository publishes a new one meanwhile. The requests go
// through the pull's client (pull_transport.go): the same allow-list, credentials and time limit as a
// pull, so resolving a version cannot reach what pulling the chart could not.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	repov1 "helm.sh/helm/v4/pkg/repo/v1"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	orasauth "oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
	kyaml "sigs.k8s.io/yaml"
)

// resolveChartVersion is Fleet's ChartVersion: an oci:// repository's tags, a Helm repository's
// index.yaml, or, without a repository (an archive URL), the version as given.
func resolveChartVersion(client *http.Client, job PullJob, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch {
	case strings.HasPrefix(job.Repo, ociPrefix):
		return ociVersion(ctx, client, job)
	case job.Repo != "":
		cv, err := indexEntry(ctx, client, job)
		if err != nil {
			return "", err
		}
		return cv.Version, nil
	default:
		return job.Version, nil
	}
}

// indexEntry is the chart version the repository's index.yaml offers for the job's constraint, read as
// Fleet reads it (entries sorted newest first, Helm's IndexFile.Get); one without URLs is an error, as
// Fleet could not pull it either.
func indexEntry(ctx context.Context, client *http.Client, job PullJob) (*repov1.ChartVersion, error) {
	indexURL, err := url.JoinPath(job.Repo, "index.yaml")
	if err != nil {
		return nil, err
	}
	data, _, err := httpGet(ctx, client, indexURL)
	if err != nil {
		return nil, err
	}
	var index repov1.IndexFile
	if err := kyaml.Unmarshal(data, &index); err != nil {
		return nil, fmt.Errorf("reading %s: %w", redact(indexURL), err)
	}
	index.SortEntries()
	cv, err := index.Get(job.Chart, job.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(indexURL), err)
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("no URLs found for chart %s %s at %s", cv.Name, cv.Version, redact(job.Repo))
	}
	return cv, nil
}

// ociVersion lists the repository's tags with oras-go over the pull's client. As in pullOCI, the
// authorizer has no credentials of its own (never the machine's credential stores): the transport adds
// the GitRepo's where helmRepoURLRegex matches, and a bearer token obtained stays in this repository's cache.
func ociVersion(ctx context.Context, client *http.Client, job PullJob) (string, error) {
	r, err := remote.NewRepository(strings.TrimPrefix(job.Repo, ociPrefix))
	if err != nil {
		return "", fmt.Errorf("failed to create OCI client: %w", err)
	}
	r.Client = &orasauth.Client{Client: client, Credential: noCredential, Cache: orasauth.NewCache()}
	r.PlainHTTP = job.Auth.BasicHTTP
	tag, err := ociTag(ctx, r, job.Version)
	if err != nil {
		return "", fmt.Errorf("could not find tag matching constraint %q in registry %s: %w", job.Version, redact(job.Repo), err)
	}
	if tag == "" {
		// Fleet's words (it appends its nil error as well; left out here).
		return "", fmt.Errorf("could not find tag matching constraint %q in registry %s", job.Version, redact(job.Repo))
	}
	return tag, nil
}

// ociTag is Fleet's GetOCITag: a tag equal to an exact version wins; otherwise the highest tag that
// parses as semver and satisfies the constraint; "" when none does. Registries list tags in lexical
// order, not by version, so every tag is looked at.
func ociTag(ctx context.Context, r *remote.Repository, v string) (string, error) {
	constraint, err := semver.NewConstraint(v)
	if err != nil {
		return "", fmt.Errorf("failed to compute version constraint from version %q: %w", v, err)
	}
	tags, err := registry.Tags(ctx, r)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the transport's message names the URL
		}
		var regErr errcode.Error
		if errors.As(err, &regErr) {
			if regErr.Code == errcode.ErrorCodeNameUnknown {
				return "", fmt.Errorf("repository %q not found in the registry", r.Reference.Repository)
			}
			err = regErr
		}
		return "", fmt.Errorf("failed to get available tags for version %q: %w", v, err)
	}
	_, err = semver.StrictNewVersion(v)
	exact := err == nil
	var best string
	var bestVersion *semver.Version
	for _, tag := range tags {
		if exact && tag == v {
			return tag, nil
		}
		sv, err := semver.NewVersion(tag)
		if err != nil || !constraint.Check(sv) {
			continue
		}
		if best == "" || sv.GreaterThan(bestVersion) {
			best, bestVersion = tag, sv
		}
	}
	return best, nil
}

// pulledVersion is the version in the pulled chart's own Chart.yaml (at the archive's top directory),
// or "" when there is none to read.
func pulledVersion(files []file) string {
	for _, f := range files {
		if dir, base := path.Split(f.name); base != "Chart.yaml" || strings.Count(dir, "/") != 1 {
			continue
		}
		var meta struct {
			Version string `json:"version"`
		}
		if kyaml.Unmarshal(f.data, &meta) == nil {
			return meta.Version
		}
	}
	return ""
}
