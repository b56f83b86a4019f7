package main

// Helm's `lookup`, as a chart sees it on Fleet's agent: the target cluster's objects, read with the
// identity that deploys the bundle. The render runs in the sandbox, which has no network, so a lookup
// is answered from a table: the render job brings what the trusted side read (`Lookups`), and Helm's
// engine reaches that table through an in-memory Kubernetes API (a rest.Config whose transport never
// opens a socket). Every lookup the templates make is recorded in the result; the caller reads the
// ones the table lacks (a `lookups` job, outside the sandbox, read-only) and renders again with them.
// The in-memory API serves each group/version the cluster serves with its kinds (from the cluster's
// capabilities), each kind its own resource name and namespaced: a lookup of a cluster-scoped kind with
// a namespace reaches the trusted reader, which ignores the namespace as Helm's client would.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const lookupTimeout = 60 * time.Second

// readLookups reads every key of a job: a Get for a name, a List without one. Read-only by construction.
func readLookups(job LookupJob) LookupResult {
	config, mapper, err := clusterMapper(job.Kubeconfig, job.Context)
	if err != nil {
		return LookupResult{Error: err.Error()}
	}
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return LookupResult{Error: err.Error()}
	}
	timeout := jobTimeout(job.TimeoutSeconds, lookupTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := LookupResult{Answers: make([]LookupAnswer, len(job.Keys))}
	for i, key := range job.Keys {
		out.Answers[i] = readLookup(ctx, mapper, client, key)
	}
	if ctx.Err() != nil {
		// An answer cut short by the deadline is no answer: the job fails, never reads as "absent".
		return LookupResult{Error: deadlineError(ctx, ctx.Err(), timeout).Error()}
	}
	return out
}

func readLookup(ctx context.Context, mapper meta.RESTMapper, client dynamic.Interface, key LookupKey) LookupAnswer {
	answer := LookupAnswer{Key: key}
	gv, err := schema.ParseGroupVersion(key.APIVersion)
	if err != nil {
		answer.Error = err.Error()
		return answer
	}
	mapping, err := mapper.RESTMapping(gv.WithKind(key.Kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		answer.Error = fmt.Sprintf("the server could not find the requested resource (%s %s)", key.APIVersion, key.Kind)
		return answer
	}
	if err != nil {
		answer.Error = err.Error()
		return answer
	}
	var resource dynamic.ResourceInterface = client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace && key.Namespace != "" {
		resource = client.Resource(mapping.Resource).Namespace(key.Namespace)
	}
	// A name gets one object; none lists them (Helm's lookup).
	var obj interface{ UnstructuredContent() map[string]any }
	if key.Name == "" {
		obj, err = resource.List(ctx, metav1.ListOptions{})
	} else {
		obj, err = resource.Get(ctx, key.Name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		answer.Error = err.Error()
	default:
		answer.Object = obj.UnstructuredContent()
	}
	return answer
}

// lookupTable is one render's view of its cluster: the answers it was given, and the keys it asked.
type lookupTable struct {
	answers map[LookupKey]LookupAnswer
	// served: the cluster's group/version/kind entries (.Capabilities.APIVersions).
	served []string
	mu     sync.Mutex
	asked  map[LookupKey]bool
}

func newLookupTable(answers []LookupAnswer, served []string) *lookupTable {
	t := &lookupTable{answers: map[LookupKey]LookupAnswer{}, served: served, asked: map[LookupKey]bool{}}
	for _, a := range answers {
		t.answers[a.Key] = a
	}
	return t
}

// keys: what the templates asked, sorted.
func (t *lookupTable) keys() []LookupKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]LookupKey, 0, len(t.asked))
	for k := range t.asked {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.APIVersion+"\x00"+a.Kind+"\x00"+a.Namespace+"\x00"+a.Name < b.APIVersion+"\x00"+b.Kind+"\x00"+b.Namespace+"\x00"+b.Name
	})
	return out
}

// restClientGetter gives Helm's engine the in-memory API (only ToRESTConfig is used by a render).
func (t *lookupTable) restClientGetter() genericclioptions.RESTClientGetter {
	return &memoryGetter{config: &rest.Config{Host: "https://lookup.invalid", Transport: t}}
}

// RoundTrip serves discovery of any group/version (every kind it is asked about, as its own plural) and
// Get/List from the table; a key the table lacks is recorded and answered "not found".
func (t *lookupTable) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return respond(req, http.StatusMethodNotAllowed, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "lookup is read-only", "code": 405})
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	// /api/v1/... or /apis/<group>/<version>/...
	var group, version string
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		version, rest = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, version, rest = parts[1], parts[2], parts[3:]
	default:
		return respond(req, http.StatusNotFound, notFound())
	}
	apiVersion := version
	if group != "" {
		apiVersion = group + "/" + version
	}
	if len(rest) == 0 {
		resources := t.kindsOf(apiVersion)
		if len(resources) == 0 {
			return respond(req, http.StatusNotFound, notFound())
		}
		return respond(req, http.StatusOK, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": apiVersion, "resources": resources})
	}
	var key LookupKey
	key.APIVersion = apiVersion
	if rest[0] == "namespaces" && len(rest) >= 3 {
		key.Namespace, rest = rest[1], rest[2:]
	}
	key.Kind = rest[0]
	if len(rest) > 1 {
		key.Name = rest[1]
	}
	t.mu.Lock()
	t.asked[key] = true
	answer, ok := t.answers[key]
	t.mu.Unlock()
	switch {
	case !ok || answer.Object == nil && answer.Error == "":
		return respond(req, http.StatusNotFound, notFound())
	case answer.Error != "":
		return respond(req, http.StatusForbidden, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": answer.Error, "reason": "Forbidden", "code": 403})
	}
	return respond(req, http.StatusOK, answer.Object)
}

// kindsOf: the kinds the cluster serves in a group/version, each its own resource name (the table is
// keyed by kind) and namespaced, so the engine's client puts the template's namespace in the path.
func (t *lookupTable) kindsOf(apiVersion string) []map[string]any {
	var out []map[string]any
	for _, v := range t.served {
		kind, ok := strings.CutPrefix(v, apiVersion+"/")
		if ok && kind != "" && !strings.Contains(kind, "/") {
			out = append(out, map[string]any{"name": kind, "singularName": "", "kind": kind, "namespaced": true, "verbs": []string{"get", "list"}})
		}
	}
	return out
}

func notFound() map[string]any {
	return map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}
}

func respond(req *http.Request, status int, body any) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(bytes.NewReader(data)), Request: req}, nil
}

type memoryGetter struct{ config *rest.Config }

func (g *memoryGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }
func (g *memoryGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return nil, fmt.Errorf("no discovery in a render")
}
func (g *memoryGetter) ToRESTMapper() (meta.RESTMapper, error) {
	return nil, fmt.Errorf("no REST mapper in a render")
}
func (g *memoryGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig { return nil }
