package main

import (
	"encoding/json"
	"sync"
)

// Request is one batch. Bundles and clusters are sent once and referenced by key from the jobs.
type Request struct {
	Bundles  map[string]*BundleInput  `json:"bundles"`
	Clusters map[string]*ClusterInput `json:"clusters"`
	// Helm: helm options by key, shared by the values jobs of many clusters.
	Helm map[string]*HelmValuesInput `json:"helm"`
	// Values: [cluster key, helm key] per job; results come back in the same order. Tuples, not
	// objects: a large fleet sends tens of thousands, and their decoding was a tenth of the batch.
	Values  [][2]string `json:"values"`
	Renders []RenderJob `json:"renders"`
	// Pulls: remote charts to download into bundles (pull.go), run before any render of the batch.
	Pulls []PullJob `json:"pulls"`
	// YAML: texts (fleet.yaml, values files) to read as Fleet reads them, by id (yamljson.go).
	YAML map[string]string `json:"yaml"`
	// Owners: per cluster, objects whose live metadata to read (owners.go).
	Owners []OwnersJob `json:"owners"`
	// Impersonate: kubeconfigs to rewrite so that they act as a service account (impersonate.go).
	Impersonate []ImpersonateJob `json:"impersonate"`
	// Readiness: live objects to judge as Fleet's agent does (readiness.go).
	Readiness []ReadinessJob `json:"readiness"`
	// Discovery: clusters whose version and API versions to read for Helm's .Capabilities (capabilities.go).
	Discovery []DiscoveryJob `json:"discovery"`
	// Capabilities: a live cluster's, by key, referenced by render jobs (sent once, not per job).
	Capabilities map[string]*Capabilities `json:"capabilities"`
	// LookupReads: objects templates asked `lookup` for, to read on their cluster (lookup.go).
	LookupReads []LookupJob `json:"lookupReads"`
	// JobGroups: the group (a GitRepo, by index) of each content job, keyed "kind id" as the sandbox's
	// markers name it; GroupSeconds: each group's time left, shared by its jobs (sandbox.go).
	JobGroups    map[string]int `json:"jobGroups"`
	GroupSeconds []float64      `json:"groupSeconds"`
}

// BundleInput is a bundle's files after Fleet's content rules (paths relative to the bundle root).
type BundleInput struct {
	Name       string      `json:"name"`
	ManifestID string      `json:"manifestId"`
	Commit     string      `json:"commit"`
	Files      []FileInput `json:"files"`
}

type FileInput struct {
	Name    string `json:"name"`
	Content string `json:"content"`
	// "base64" for files that are not UTF-8 text (chart archives); empty for text.
	Encoding string `json:"encoding,omitempty"`
}

// ClusterInput is the template context Fleet gives helm values (`.ClusterName` and the rest).
type ClusterInput struct {
	Name           string            `json:"name"`
	Namespace      string            `json:"namespace"`
	Labels         map[string]string `json:"labels"`
	Annotations    map[string]string `json:"annotations"`
	TemplateValues map[string]any    `json:"templateValues"`

	viewOnce sync.Once
	cached   *clusterView
}

// HelmValuesInput is the part of the merged helm options that values processing reads.
type HelmValuesInput struct {
	Values            map[string]any    `json:"values"`
	TemplateValues    map[string]string `json:"templateValues"`
	DisablePreProcess bool              `json:"disablePreProcess"`
}

type ValuesJob struct {
	Cluster string
	Helm    string
}

type ValuesResult struct {
	// Values is absent when Fleet leaves the options untouched (a cluster without labels, no values).
	Values  map[string]any `json:"values,omitempty"`
	Changed bool           `json:"changed"`
	Error   string         `json:"error,omitempty"`
}

// RenderOptions are the merged, templated deployment options that change what is rendered.
type RenderOptions struct {
	DefaultNamespace   string `json:"defaultNamespace,omitempty"`
	TargetNamespace    string `json:"namespace,omitempty"`
	DeleteCRDResources bool   `json:"deleteCRDResources,omitempty"`
	Helm               struct {
		Chart                   string         `json:"chart,omitempty"`
		Repo                    string         `json:"repo,omitempty"`
		Version                 string         `json:"version,omitempty"`
		ReleaseName             string         `json:"releaseName,omitempty"`
		Values                  map[string]any `json:"values,omitempty"`
		DisableDNS              bool           `json:"disableDNS,omitempty"`
		SkipSchemaValidation    bool           `json:"skipSchemaValidation,omitempty"`
		DisableDependencyUpdate bool           `json:"disableDependencyUpdate,omitempty"`
	} `json:"helm"`
	Kustomize struct {
		Dir string `json:"dir,omitempty"`
	} `json:"kustomize"`
	YAML struct {
		Overlays []string `json:"overlays,omitempty"`
	} `json:"yaml"`
}

type RenderJob struct {
	ID          string `json:"id"`
	Bundle      string `json:"bundle"`
	ReleaseName string `json:"releaseName"`
	Namespace   string `json:"namespace"`
	// KubeVersion and APIVersions: Helm's --kube-version and --api-versions (render mode; the API
	// versions join Helm's defaults). Capabilities, a key of Request.Capabilities, replaces both with a
	// live cluster's own, as Fleet's agent sees them.
	KubeVersion  string   `json:"kubeVersion,omitempty"`
	APIVersions  []string `json:"apiVersions,omitempty"`
	Capabilities string   `json:"capabilities,omitempty"`
	// Lookups: on a live cluster (with Capabilities), what `lookup` answers, as read for this job; absent,
	// `lookup` finds nothing, as in `helm template`.
	Lookups *[]LookupAnswer `json:"lookups,omitempty"`
	// Revision: on a live cluster, the Helm revision the pair last deployed (0: never): the render is
	// then Helm's upgrade to Revision+1 (.Release.IsUpgrade, .Release.Revision), as on Fleet's agent.
	Revision int           `json:"revision,omitempty"`
	Options  RenderOptions `json:"options"`
	// ValuesFrom: on a live cluster, the keys helm.valuesFrom references, as read there with the
	// deploying identity, in Fleet's order (valuesfrom.go): merged over Options.Helm.Values.
	ValuesFrom []ValuesFromInput `json:"valuesFrom,omitempty"`
}

// RenderResult: objects in Helm's install order, then the chart's crds/ and hooks apart, as the
// agent treats them differently (CRDs first, never post-rendered; hooks around the install).
type RenderResult struct {
	Objects []map[string]any `json:"objects"`
	CRDs    []map[string]any `json:"crds"`
	Hooks   []Hook           `json:"hooks"`
	Style   string           `json:"style"`
	// Warnings: what Fleet does silently (a file skipped, an overlay that does not exist).
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Lookups: every `lookup` the templates made (with a table: Lookups of the job), answered or not.
	Lookups []LookupKey `json:"lookups,omitempty"`
}

type Hook struct {
	Events         []string       `json:"events"`
	Weight         int            `json:"weight"`
	DeletePolicies []string       `json:"deletePolicies"`
	Object         map[string]any `json:"object"`
}

type Response struct {
	// Values: the distinct ValuesResults of the values jobs; ValueOf: per job, in job order, the index of
	// its result in Values. Many jobs share a result (the same values on clusters that differ only in
	// what the template does not read), and the caller then parses and hashes it once.
	Values  []json.RawMessage `json:"values"`
	ValueOf []int             `json:"valueOf"`
	// Renders: each RenderResult encoded by its worker (in parallel, and measured against the output limit).
	Renders     map[string]json.RawMessage   `json:"renders"`
	Pulls       map[string]PullResult        `json:"pulls"`
	YAML        map[string]YAMLResult        `json:"yaml"`
	Owners      map[string]OwnersResult      `json:"owners"`
	Impersonate map[string]ImpersonateResult `json:"impersonate"`
	Readiness   map[string]ReadinessResult   `json:"readiness"`
	Discovery   map[string]DiscoveryResult   `json:"discovery"`
	LookupReads map[string]LookupResult      `json:"lookupReads"`
	// GroupUsedMs: the time each group (GitRepo, by index) spent here, which the caller charges to it
	// across the batches of one operation (core/renderer/render-budget.ts).
	GroupUsedMs []int64 `json:"groupUsedMs,omitempty"`
}
