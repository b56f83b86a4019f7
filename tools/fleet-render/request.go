package main

import (
	"encoding/json"
	"sync"
)

// The request's types are generated from the schema (core/model/schema/renderer-request.ts) into
// zz_generated_schema.go; the results, and what never crosses the boundary, are here.

// clusterCache is a ClusterInput's view, computed once for the values jobs that share the cluster.
type clusterCache struct {
	viewOnce sync.Once
	cached   *clusterView
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
