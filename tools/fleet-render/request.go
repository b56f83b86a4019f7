package main

import "sync"

// The request's and the response's types are generated from the schema (core/model/schema:
// renderer-request.ts, renderer-response.ts) into zz_generated_schema.go; what never crosses the
// boundary is here.

// clusterCache is a ClusterInput's view, computed once for the values jobs that share the cluster.
type clusterCache struct {
	viewOnce sync.Once
	cached   *clusterView
}

// ValuesJob is one values job: [cluster key, helm key] of the request.
type ValuesJob struct {
	Cluster string
	Helm    string
}
