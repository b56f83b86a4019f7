// fleet-render: Fleet's rendering with Fleet's own libraries (text/template + sprig, Helm's SDK,
// kustomize's krusty, sigs.k8s.io/yaml), for pulumi-fleet's pure pipeline.
//
// One batch per call: a JSON request on stdin, a JSON response on stdout. Kinds of job:
//   - values:  Fleet's controller-side helm values processing for one (merged options, cluster)
//     (internal/cmd/controller/target/builder.go in rancher/fleet: label substitution, `${ }`
//     templating of the values' YAML text, templateValues);
//   - pulls:   remote charts (Helm repository, OCI, archive URL) downloaded into a bundle's files, as
//     `fleet apply` does (pull.go);
//   - yaml:    fleet.yaml and values files read as Fleet reads them (sigs.k8s.io/yaml, YAML 1.1);
//   - owners:  the live metadata of objects about to be created, per cluster (owners.go), for Helm's
//     refusal to install over an object it does not own (helm.takeOwnership);
//   - renders: Fleet's agent-side rendering of one bundle with merged options
//     (the bundle as a Helm chart, `helm install --dry-run=client`, the post-render step with
//     kustomize at kustomize.dir and the raw YAML files), as `fleet test` does.
//
// Jobs run in parallel; a failing job returns its error and never stops the others.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

const usage = `usage: fleet-render < request.json > response.json
       fleet-render --sandbox [--job-timeout D] [--gitrepo-seconds S] [--memory-mib N] [--output-mib N] < request.json > response.json
       fleet-render --version

Reads {"bundles": {...}, "clusters": {...}, "helm": {...}, "values": [...], "renders": [...], "pulls": [...],
"yaml": {...}, "owners": [...]} on stdin and writes {"values": [...], "valueOf": [...], "renders": {...}, "pulls": {...}, "yaml": {...}, "owners": {...}} on stdout (see request.go).`

// version is printed by --version; the Node side checks it so a stale cached build is never used.
const version = "fleet-render 1 (helm v4.2.3, sprig v3.3.0, kustomize api v0.21.1)"

func main() {
	var watch *jobWatch
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--version":
			fmt.Println(version)
			return
		case "--sandbox":
			limits, err := parseSandboxFlags(os.Args[2:])
			if err != nil {
				fmt.Fprintf(os.Stderr, "fleet-render: %v\n%s\n", err, usage)
				os.Exit(2)
			}
			if err := enterSandbox(limits); err != nil {
				fmt.Fprintf(os.Stderr, "fleet-render: sandbox: %v\n", err)
				os.Exit(2)
			}
			watch = newJobWatch(limits)
		default:
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(2)
		}
	}
	var req Request
	dec := json.NewDecoder(os.Stdin)
	if err := dec.Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "fleet-render: reading the request: %v\n", err)
		os.Exit(2)
	}
	// GitRepo content is evaluated only in the sandbox; the jobs that need the network or a cluster's
	// credentials (and read only the operator's data) only outside it.
	// Each job kind's class is the schema's (core/model/schema/renderer-request.ts, jobTrust).
	content, trusted := req.jobCounts()
	if watch != nil && trusted > 0 || watch == nil && content > 0 {
		fmt.Fprintf(os.Stderr, "fleet-render: %s jobs run only with --sandbox; %s only without\n", kindsOf("content"), kindsOf("trusted"))
		os.Exit(2)
	}
	watch.setGroups(req.JobGroups, req.GroupSeconds)
	// A batch is short-lived and memory is plentiful: collect garbage less often.
	debug.SetGCPercent(400)
	resp := run(&req, watch)
	resp.GroupUsedMs = watch.usedMs()
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		fmt.Fprintf(os.Stderr, "fleet-render: writing the response: %v\n", err)
		os.Exit(1)
	}
}

func run(req *Request, watch *jobWatch) *Response {
	resp := &Response{
		Renders:     make(map[string]json.RawMessage, len(req.Renders)),
		Pulls:       make(map[string]PullResult, len(req.Pulls)),
		YAML:        make(map[string]YAMLResult, len(req.YAML)),
		Owners:      make(map[string]OwnersResult, len(req.Owners)),
		Impersonate: make(map[string]ImpersonateResult, len(req.Impersonate)),
		Discovery:   make(map[string]DiscoveryResult, len(req.Discovery)),
		LookupReads: make(map[string]LookupResult, len(req.LookupReads)),
	}
	for _, job := range req.Impersonate {
		resp.Impersonate[job.ID] = impersonate(job)
	}
	resp.Readiness = make(map[string]ReadinessResult, len(req.Readiness))
	for _, job := range req.Readiness {
		resp.Readiness[job.ID] = readiness(job)
	}
	for id, text := range req.YAML {
		result := runJob(watch, "yaml", id, func() YAMLResult { return yamlToJSON(text) }, func(reason string) YAMLResult { return YAMLResult{Error: reason} })
		if err := watch.check(result.JSON); err != nil {
			result = YAMLResult{Error: err.Error()}
		}
		resp.YAML[id] = result
	}
	var mu sync.Mutex
	parallel(len(req.Pulls), func(i int) {
		result := pullChart(req.Pulls[i])
		mu.Lock()
		resp.Pulls[req.Pulls[i].ID] = result
		mu.Unlock()
	})
	// Clusters are read concurrently (network-bound, not CPU-bound: not limited to GOMAXPROCS).
	var reads sync.WaitGroup
	readClusters(&reads, &mu, req.Owners, func(j OwnersJob) string { return j.ID }, readOwners, func(e string) OwnersResult { return OwnersResult{Error: e} }, resp.Owners)
	readClusters(&reads, &mu, req.LookupReads, func(j LookupJob) string { return j.ID }, readLookups, func(e string) LookupResult { return LookupResult{Error: e} }, resp.LookupReads)
	readClusters(&reads, &mu, req.Discovery, func(j DiscoveryJob) string { return j.ID }, discover, func(e string) DiscoveryResult { return DiscoveryResult{Error: e} }, resp.Discovery)
	reads.Wait()
	encoded := make([]json.RawMessage, len(req.Values))
	parallel(len(req.Values), func(i int) {
		job := ValuesJob{Cluster: req.Values[i][0], Helm: req.Values[i][1]}
		result := runJob(watch, "values", strconv.Itoa(i), func() json.RawMessage {
			return processValuesEncoded(job, req.Helm[job.Helm], req.Clusters[job.Cluster])
		}, func(reason string) json.RawMessage { return mustEncode(ValuesResult{Error: reason}) })
		if err := watch.check(result); err != nil {
			result = mustEncode(ValuesResult{Error: err.Error()})
		}
		encoded[i] = result // each worker writes its own slot
	})
	resp.Values, resp.ValueOf = distinct(encoded)
	parallel(len(req.Renders), func(i int) {
		job := req.Renders[i]
		result := runJob(watch, "renders", job.ID, func() json.RawMessage {
			return mustEncode(renderJob(job, req.Bundles[job.Bundle], req.Capabilities))
		}, func(reason string) json.RawMessage { return mustEncode(RenderResult{Error: reason}) })
		if err := watch.check(result); err != nil {
			result = mustEncode(RenderResult{Error: err.Error()})
		}
		mu.Lock()
		resp.Renders[job.ID] = result
		mu.Unlock()
	})
	return resp
}

// kindsOf names the job kinds of a trust class, for messages ("yaml, values and renders").
func kindsOf(class string) string {
	var kinds []string
	for _, k := range jobTrust {
		if k.class == class {
			kinds = append(kinds, k.kind)
		}
	}
	if len(kinds) < 2 {
		return strings.Join(kinds, "")
	}
	return strings.Join(kinds[:len(kinds)-1], ", ") + " and " + kinds[len(kinds)-1]
}

// readClusters starts one goroutine per job (each reads one cluster) that stores its result by id under mu.
// readClusters runs each job in its own goroutine; a job that panics answers with its error, never
// ending the batch (and so every other GitRepo's reads).
func readClusters[J, R any](wg *sync.WaitGroup, mu *sync.Mutex, jobs []J, id func(J) string, read func(J) R, failed func(string) R, into map[string]R) {
	for _, job := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			result := readRecovering(job, read, failed)
			mu.Lock()
			into[id(job)] = result
			mu.Unlock()
		}()
	}
}

func readRecovering[J, R any](job J, read func(J) R, failed func(string) R) (result R) {
	defer func() {
		if p := recover(); p != nil {
			result = failed(fmt.Sprintf("the read failed: %v", p))
		}
	}()
	return read(job)
}

// mustEncode: JSON without HTML escaping, as the response encoder writes it.
func mustEncode(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// distinct: the different results, in order of first use, and each job's index among them.
func distinct(encoded []json.RawMessage) ([]json.RawMessage, []int) {
	index := make(map[string]int, 64)
	values := make([]json.RawMessage, 0, 64)
	valueOf := make([]int, len(encoded))
	for i, e := range encoded {
		k, ok := index[string(e)]
		if !ok {
			k = len(values)
			index[string(e)] = k
			values = append(values, e)
		}
		valueOf[i] = k
	}
	return values, valueOf
}

// parallel runs f(0..n-1) on GOMAXPROCS workers.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
