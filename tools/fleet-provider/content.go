package main

// Each distinct render once (components/content.ts): a BundleContent resource, named by its digest,
// holds the manifests; it does nothing on any cluster. Its Check verifies the digest and keeps the
// manifests in this process's memory, where a pair that names the digest (its `content`) takes them
// in its Create and Update: the pair depends on its content, so that Check has run. A refresh has no
// program: the operation hands the contents over in a file named by PULUMI_FLEET_CONTENT_FILE
// (automation/engine/content-handover.ts), read once, when a pair's Read first needs one.

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	bundleContentTk = "pulumi-fleet:index:BundleContent"
	contentFileEnv  = "PULUMI_FLEET_CONTENT_FILE"
	// The memory the contents may take: they are only what this stack's program registers (each render
	// already bounded by fleet-render's output bound, their number by the operator's bundles and clusters),
	// but a bound of its own makes an over-large stack one content's clear failure, not the process's end.
	maxContentBytes = 4 << 30
)

// content is one render: each object's manifest (JSON text) and digest, by key.
type content struct {
	manifests map[string]json.RawMessage
	digests   map[string]string
	size      int
}

// contents are the renders this process was given, by digest.
type contents struct {
	mu       sync.Mutex
	byDigest map[string]*content
	size     int
	fileOnce sync.Once
	fileErr  error            // the hand-over file could not be read as a whole
	refused  map[string]error // each content of the file that failed its check, by digest
}

var stash = &contents{byDigest: map[string]*content{}}

// hookContentKey is where a content holds a pair's hook (core/model/pair.ts hookContentKey).
var hookContentKey = regexp.MustCompile(`^hooks\[[0-9]+\]$`)

// contentOf reads a BundleContent's inputs ({objects: {key: manifest text}}) and checks its digest is
// the one it is named by.
func contentOf(name string, inputs map[string]any) (*content, error) {
	objects, _ := inputs["objects"].(map[string]any)
	c := &content{manifests: map[string]json.RawMessage{}, digests: map[string]string{}}
	for k, v := range objects {
		text, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("object %s: its manifest is not JSON text", k)
		}
		var o DesiredObject
		if err := json.Unmarshal([]byte(`{"manifest":`+quote(text)+`}`), &o); err != nil {
			return nil, fmt.Errorf("object %s: %w", k, err)
		}
		// An object is checked against its key; a hook, kept under hooks[<index>], has no key of its own.
		if !hookContentKey.MatchString(k) {
			if _, err := unstructuredOf(map[string]DesiredObject{k: o}); err != nil {
				return nil, err
			}
		}
		c.manifests[k], c.digests[k], c.size = json.RawMessage(text), objectDigest(o.Manifest), c.size+len(text)
	}
	if got := contentDigest(c.digests); got != name {
		return nil, fmt.Errorf("BundleContent %s: its manifests' digest is %s: a content is named by its digest (core/model/content-digest.ts), so this one was changed after it was registered, or the program and this provider disagree on the rule", name, got)
	}
	return c, nil
}

func quote(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// keep stashes a checked content (again: a no-op).
func (cs *contents) keep(name string, c *content) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.byDigest[name]; ok {
		return nil
	}
	if cs.size+c.size > maxContentBytes {
		return fmt.Errorf("BundleContent %s: the contents of this stack take more than %d bytes of the provider's memory", name, maxContentBytes)
	}
	cs.byDigest[name], cs.size = c, cs.size+c.size
	return nil
}

func (cs *contents) get(digest string) *content {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byDigest[digest]
}

// handedOver loads, once, the contents the operation wrote for a refresh ({digest: {key: manifest text}});
// each is checked as a BundleContent's Check checks it. No file: nothing handed over (a plain `pulumi refresh`).
// A content that fails is that content's failure alone (refusedContent): the others still load, so one
// bad content does not cut every pair down to a presence check.
func (cs *contents) handedOver() error {
	cs.fileOnce.Do(func() {
		path := os.Getenv(contentFileEnv)
		if path == "" {
			return
		}
		raw, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return
		} else if err != nil {
			cs.fileErr = err
			return
		}
		var all map[string]map[string]any
		if err := json.Unmarshal(raw, &all); err != nil {
			cs.fileErr = fmt.Errorf("%s: %w", path, err)
			return
		}
		for name, objects := range all {
			c, err := contentOf(name, map[string]any{"objects": objects})
			if err == nil {
				err = cs.keep(name, c)
			}
			if err != nil {
				cs.refuse(name, fmt.Errorf("%s: %w", path, err))
			}
		}
	})
	return cs.fileErr
}

func (cs *contents) refuse(name string, err error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.refused == nil {
		cs.refused = map[string]error{}
	}
	cs.refused[name] = err
}

// refusedContent is why a content handed over for a refresh was not loaded (nil: it was not refused).
func (cs *contents) refusedContent(digest string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.refused[digest]
}

// withContent fills the manifests of a pair's objects from its content (a pair without `content` holds
// them already). An error names the pair and the digest.
func withContent(urn string, spec *Spec) error {
	if spec.Content == "" {
		return nil
	}
	c := stash.get(spec.Content)
	if c == nil {
		return fmt.Errorf("%s: its content %s was not given to the provider (no BundleContent of that digest was checked in this run, nor handed over for a refresh)", urn, spec.Content)
	}
	filled := make(map[string]DesiredObject, len(spec.Objects))
	for k, o := range spec.Objects {
		text, ok := c.manifests[k]
		if !ok {
			return fmt.Errorf("%s: its content %s does not hold object %s", urn, spec.Content, k)
		}
		shared, err := decodeManifest(text)
		if err != nil {
			return fmt.Errorf("%s: content %s, object %s: %w", urn, spec.Content, k, err)
		}
		o.Manifest = withOwnerLabels(shared, spec.DeletePolicy.OwnerLabels)
		if got := objectDigest(o.Manifest); got != o.Digest {
			return fmt.Errorf("%s: object %s of its content %s with its owner labels has digest %s, not %s", urn, k, spec.Content, got, o.Digest)
		}
		filled[k] = o
	}
	spec.Objects = filled
	// Its hooks kept in the content (core/model/pair.ts contentForm): those that run at deletion never are.
	for i, h := range spec.Hooks {
		if h.Manifest != "" || h.Digest == "" {
			continue
		}
		key := fmt.Sprintf("hooks[%d]", i)
		text, ok := c.manifests[key]
		if !ok {
			return fmt.Errorf("%s: its content %s does not hold its hook %s", urn, spec.Content, h.Object)
		}
		shared, err := decodeManifest(text)
		if err != nil {
			return fmt.Errorf("%s: content %s, hook %s: %w", urn, spec.Content, h.Object, err)
		}
		manifest := withOwnerLabels(shared, spec.DeletePolicy.OwnerLabels)
		u := unstructured.Unstructured{Object: manifest}
		if got := objectKey(groupOf(u.GetAPIVersion()), u.GetKind(), u.GetNamespace(), u.GetName()); got != h.Object {
			return fmt.Errorf("%s: hook %s of its content %s is %s", urn, h.Object, spec.Content, got)
		}
		if got := objectDigest(manifest); got != h.Digest {
			return fmt.Errorf("%s: hook %s of its content %s with its owner labels has digest %s, not %s", urn, h.Object, spec.Content, got, h.Digest)
		}
		full, err := json.Marshal(manifest)
		if err != nil {
			return err
		}
		spec.Hooks[i].Manifest = string(full)
	}
	return nil
}

// withOwnerLabels is a content's manifest as a pair applies it: the content leaves out the owner labels
// (they name the cluster), the pair's deletePolicy.ownerLabels, which are on every object it applies
// (core/model/pair.ts withOwnerLabels does the same).
func withOwnerLabels(shared map[string]any, ownerLabels map[string]string) map[string]any {
	meta, _ := shared["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		shared["metadata"] = meta
	}
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	for k, v := range ownerLabels {
		labels[k] = v
	}
	meta["labels"] = labels
	return shared
}

// changedDigests: a pair with content (on either side) has an object whose digest changed, or one added or removed.
func changedDigests(olds, news Spec) bool {
	if olds.Content == "" && news.Content == "" {
		return false
	}
	if len(olds.Objects) != len(news.Objects) {
		return true
	}
	for k, n := range news.Objects {
		o, ok := olds.Objects[k]
		if !ok || digestOf(o) != digestOf(n) {
			return true
		}
	}
	return false
}

// digestOf is an object's digest: given (a pair with content) or computed from its manifest (a pair
// of an earlier version, or one whose objects are secret), so the two forms compare equal.
func digestOf(o DesiredObject) string {
	if o.Digest != "" || o.Manifest == nil {
		return o.Digest
	}
	return objectDigest(o.Manifest)
}

// identity is the object's manifest, or, without it (a pair with content, not filled), its identity
// from its key and apiVersion: what prune, delete and the render directory's file names need.
func (o DesiredObject) identity(key string) map[string]any {
	if o.Manifest != nil {
		return o.Manifest
	}
	parts := strings.SplitN(key, "/", 4)
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	meta := map[string]any{"name": parts[3]}
	if parts[2] != "" {
		meta["namespace"] = parts[2]
	}
	apiVersion := o.APIVersion
	if apiVersion == "" {
		apiVersion = "v1"
		if parts[0] != "" {
			apiVersion = parts[0] + "/v1"
		}
	}
	return map[string]any{"apiVersion": apiVersion, "kind": parts[1], "metadata": meta}
}

func isContentURN(urn string) bool {
	parts := strings.Split(urn, "::")
	if len(parts) < 4 {
		return false
	}
	qualified := parts[len(parts)-2]
	return qualified == bundleContentTk || strings.HasSuffix(qualified, "$"+bundleContentTk)
}

func nameOfURN(urn string) string {
	return urn[strings.LastIndex(urn, "::")+2:]
}

// checkContent verifies a BundleContent's digest and stashes its manifests (in a preview too: the
// pairs' previews diff against them).
func checkContent(req *pulumirpc.CheckRequest) *pulumirpc.CheckResponse {
	resp := &pulumirpc.CheckResponse{Inputs: req.GetNews()}
	if containsUnknown(req.GetNews()) {
		return resp
	}
	name := nameOfURN(req.GetUrn())
	c, err := contentOf(name, unwrapSecrets(req.GetNews().AsMap()).(map[string]any))
	if err == nil {
		err = stash.keep(name, c)
	}
	if err != nil {
		resp.Failures = []*pulumirpc.CheckFailure{{Property: "objects", Reason: err.Error()}}
	}
	return resp
}

// contentRead keeps a content a refresh reads (its inputs are the state's) and changes nothing.
func contentRead(req *pulumirpc.ReadRequest) *pulumirpc.ReadResponse {
	name := nameOfURN(req.GetUrn())
	if c, err := contentOf(name, unwrapSecrets(req.GetInputs().AsMap()).(map[string]any)); err == nil {
		_ = stash.keep(name, c)
	}
	return &pulumirpc.ReadResponse{Id: req.GetId(), Properties: req.GetProperties(), Inputs: req.GetInputs()}
}

// emptyOutputs: a content's outputs hold nothing (its inputs hold the manifests: a second copy would double it).
func emptyOutputs() *structpb.Struct { return &structpb.Struct{Fields: map[string]*structpb.Value{}} }
