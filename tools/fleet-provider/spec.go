package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	packageName        = "pulumi-fleet"
	bundleDeploymentTk = "pulumi-fleet:index:BundleDeployment"
	// What a cluster needs before its bundles (the namespaces they need, its agent): the same kind of set,
	// applied, pruned and deleted as a pair is.
	clusterSetupTk = "pulumi-fleet:index:ClusterSetup"
	// The engine's marker for a value not known during a preview.
	unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
)

// Spec, the pair's inputs, is generated from the schema (core/model/schema/pair-spec.ts) into
// zz_generated_schema.go; what never crosses the boundary is here.
type specLocal struct {
	// A cluster's setup (told by its resource type, never by its inputs): each namespace is applied on
	// its own, so a refused one fails only the pairs that need it (namespaces_apart.go).
	namespacesApart bool
}

// DesiredObject is one rendered object and what a prune does with it (its fields: the schema's
// PAIR_OBJECT, core/model/schema/pair-spec.ts; written here for its UnmarshalJSON).
type DesiredObject struct {
	// Absent from a pair with `content` (its BundleContent holds it) until withContent fills it.
	Manifest map[string]any `json:"manifest,omitempty"`
	// A pair with `content` only: the object's apiVersion (its key leaves the version out).
	APIVersion string `json:"apiVersion,omitempty"`
	// A pair with `content` only: the manifest's digest (content_digest.go), what diffPair compares.
	Digest string `json:"digest,omitempty"`
	// Why a prune leaves it on the cluster (keepResources, Helm's keep policy, a chart's CRD...); empty: deleted.
	Retain string `json:"retain,omitempty"`
	// JSON pointers drift leaves out (fleet.yaml diff.comparePatches).
	IgnoreDrift []string `json:"ignoreDrift,omitempty"`
	// A chart's crds/ object as Helm installs it: created when absent at the pair's install, never
	// updated or drift-checked after (crds.go).
	CreateOnly bool `json:"createOnly,omitempty"`
}

// UnmarshalJSON reads a manifest given as JSON text (what the program registers: one string per object
// instead of a property tree the engine copies node by node in every event) or, as an earlier version
// registered it, as an object. Numbers stay json.Number either way, as fromStruct decodes them.
func (o *DesiredObject) UnmarshalJSON(b []byte) error {
	var wire struct {
		Manifest    json.RawMessage `json:"manifest"`
		APIVersion  string          `json:"apiVersion,omitempty"`
		Digest      string          `json:"digest,omitempty"`
		Retain      string          `json:"retain,omitempty"`
		IgnoreDrift []string        `json:"ignoreDrift,omitempty"`
		CreateOnly  bool            `json:"createOnly,omitempty"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return err
	}
	raw := []byte(wire.Manifest)
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return err
		}
		raw = []byte(text)
	}
	var manifest map[string]any
	if len(raw) > 0 && string(raw) != "null" {
		var err error
		if manifest, err = decodeManifest(raw); err != nil {
			return fmt.Errorf("manifest: %w", err)
		}
	}
	*o = DesiredObject{Manifest: manifest, APIVersion: wire.APIVersion, Digest: wire.Digest, Retain: wire.Retain, IgnoreDrift: wire.IgnoreDrift, CreateOnly: wire.CreateOnly}
	return nil
}

// decodeManifest reads one object's JSON text, its numbers kept as json.Number (as fromStruct decodes
// them): the one way a manifest held as text (an object's, a hook's, a content's) becomes a map.
func decodeManifest(text []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// Status is Fleet's BundleDeployment status, the pair's outputs beside its inputs.
type Status struct {
	AppliedDeploymentID string `json:"appliedDeploymentId"`
	State               string `json:"state"`
	// One line per object that is not ready or was refused, with the server's words.
	Messages  []string      `json:"messages"`
	Inventory []InventoryID `json:"inventory"`
	// Counts successful applies, as a Helm release revision does.
	Revision int `json:"revision"`
	// Objects the last apply left on the cluster because of a retain rule, with the reason.
	Retained []string `json:"retained"`
	// A refresh only: the keys of the objects that drifted or are missing (state Modified).
	Drifted []string `json:"drifted,omitempty"`
	// The deploymentID whose Helm hooks all ran (hooks.go hooksDue): an apply of another runs them.
	HooksRunFor string `json:"hooksRunFor,omitempty"`
	// An install or upgrade was attempted, as a Helm release would record (hooks.go released).
	Released bool `json:"released,omitempty"`
	// A setup only: the namespaces the API server refused, with its words, for the pairs that need them.
	Refused map[string]string `json:"refused,omitempty"`
}

// InventoryID names one object this pair applied.
type InventoryID struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	UID       string `json:"uid"`
}

// Key is the inventory entry's objectKey.
func (id InventoryID) Key() string { return objectKey(id.Group, id.Kind, id.Namespace, id.Name) }

// Fleet's BundleDeployment states (fleet.cattle.io/v1alpha1 BundleState).
const (
	StateReady       = "Ready"
	StateNotReady    = "NotReady"
	StateWaitApplied = "WaitApplied"
	StateErrApplied  = "ErrApplied"
	StateModified    = "Modified"
	StateOutOfSync   = "OutOfSync"
)

// Outputs is a pair as the state holds it: its spec (from its inputs) and its status; a refresh adds what it read.
type Outputs struct {
	Spec
	Status
	// A refresh only: each inventory object as it is on the cluster (apiVersion, kind, metadata, status),
	// for readiness judged as Fleet judges it (core/renderer/readiness.ts).
	Live []map[string]any `json:"live,omitempty"`
}

// recorded is what a pair's outputs hold: its status and its spec without the set's objects, which its
// inputs hold. A second copy in the outputs doubled the state, and the engine deep-copies, serializes
// and sends every resource's inputs and outputs in each of its events (most of a large preview's CPU).
func recorded(o Outputs) Outputs {
	o.Objects, o.SecretObjects, o.Adopt, o.Hooks = nil, nil, nil, nil
	return o
}

// pairState decodes a pair's previous state: its status from its outputs, its spec from its inputs (an
// earlier version's outputs also hold the spec; the inputs are what it was asked for either way).
func pairState(inputs, outputs *structpb.Struct) (Outputs, error) {
	var o Outputs
	if err := fromStruct(outputs, &o); err != nil {
		return o, fmt.Errorf("the state's outputs: %w", err)
	}
	if len(inputs.GetFields()) > 0 {
		var spec Spec
		if err := fromStruct(inputs, &spec); err != nil {
			return o, fmt.Errorf("the state's inputs: %w", err)
		}
		o.Spec = spec
	}
	return o, nil
}

func objectKey(group, kind, namespace, name string) string {
	return strings.Join([]string{group, kind, namespace, name}, "/")
}

// groupOf is the group of an apiVersion ("" for the core group).
func groupOf(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// The engine's marker of a secret value: {sigKey: secretSig, "value": ...}.
const (
	sigKey    = "4dabf18193072939515e22adb298388d"
	secretSig = "1b47061264138c4ac30d75fd1eb44270"
)

// fromStruct decodes a protocol struct into v through JSON, a secret as its value (the engine keeps
// secret what was secret: this provider does not accept secrets for resources, and Configure's
// arguments arrive marked).
func fromStruct(s *structpb.Struct, v any) error {
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(unwrapSecrets(s.AsMap()))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	return dec.Decode(v)
}

func unwrapSecrets(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if t[sigKey] == secretSig {
			return unwrapSecrets(t["value"])
		}
		for k, x := range t {
			t[k] = unwrapSecrets(x)
		}
	case []any:
		for i, x := range t {
			t[i] = unwrapSecrets(x)
		}
	}
	return v
}

// toStruct encodes v as a protocol struct through JSON.
func toStruct(v any) (*structpb.Struct, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	return s, s.UnmarshalJSON(raw)
}

// containsUnknown says whether a preview left any value of the inputs unknown.
func containsUnknown(s *structpb.Struct) bool {
	raw, err := s.MarshalJSON()
	return err == nil && strings.Contains(string(raw), unknownValue)
}

// set is every object of the pair by key: objects and secretObjects.
func (s Spec) set() map[string]DesiredObject {
	if len(s.SecretObjects) == 0 {
		return s.Objects
	}
	all := make(map[string]DesiredObject, len(s.Objects)+len(s.SecretObjects))
	for k, o := range s.Objects {
		all[k] = o
	}
	for k, o := range s.SecretObjects {
		all[k] = o
	}
	return all
}

// secretValues are the values of the set's secret objects (data as written and decoded, stringData
// as written and encoded): an API server's message may quote a refused field, and the pair's messages
// are not secrets in the state.
func (s Spec) secretValues() []string {
	var out []string
	for _, o := range s.SecretObjects {
		for _, field := range []string{"data", "stringData"} {
			values, _ := o.Manifest[field].(map[string]any)
			for _, v := range values {
				text, ok := v.(string)
				if !ok || len(text) < 4 {
					continue
				}
				out = append(out, text)
				if field == "data" {
					if decoded, err := base64.StdEncoding.DecodeString(text); err == nil && len(decoded) >= 4 {
						out = append(out, string(decoded))
					}
				} else {
					out = append(out, base64.StdEncoding.EncodeToString([]byte(text)))
				}
			}
		}
	}
	return out
}

// told is the status as the pair's outputs may say it. Outputs are not only stored (where the program
// marks a secret pair's messages secret): the engine returns them to the program, whose SDK logs each
// registration's answer at debug level in clear (`--debug`, the engine's debug events). So no value of
// a secret object may be in them: the secret objects' values are replaced by [secret], and a secret
// set's messages, which may quote any of its values, are withheld, only their number kept.
func told(st Status, spec Spec) Status {
	if spec.SecretSet && len(st.Messages) > 0 {
		st.Messages = []string{fmt.Sprintf("%d messages withheld: this set's objects are secret (what a lookup or helm.valuesFrom read from a Secret, or decrypted SOPS files) and a message may quote them", len(st.Messages))}
		return st
	}
	st.Messages = redacted(st.Messages, spec.secretValues())
	return st
}

// redacted replaces each secret value in the messages with [secret].
func redacted(msgs []string, secrets []string) []string {
	if len(secrets) == 0 {
		return msgs
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		for _, v := range secrets {
			m = strings.ReplaceAll(m, v, "[secret]")
		}
		out[i] = m
	}
	return out
}

// unstructuredObjects turns the desired objects into the set to apply, sorted by key.
func (s Spec) unstructuredObjects() ([]*unstructured.Unstructured, error) {
	return unstructuredOf(s.set())
}

func unstructuredOf(objects map[string]DesiredObject) ([]*unstructured.Unstructured, error) {
	keys := sortedKeys(objects)
	out := make([]*unstructured.Unstructured, 0, len(keys))
	for _, k := range keys {
		raw, err := json.Marshal(objects[k].Manifest)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("object %s: %w", k, err)
		}
		if got := objectKey(groupOf(u.GetAPIVersion()), u.GetKind(), u.GetNamespace(), u.GetName()); got != k {
			return nil, fmt.Errorf("object %s: its manifest is %s", k, got)
		}
		out = append(out, u)
	}
	return out, nil
}

func sortedKeys(objects map[string]DesiredObject) []string {
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
