package main

// Fleet's controller-side helm values processing (rancher/fleet internal/cmd/controller/target/builder.go,
// preprocessHelmValues), reproduced with the same libraries: labels cleaned with wrangler's
// CleanAnnotationsForExport, values marshalled with sigs.k8s.io/yaml, templated with text/template +
// sprig (`${ }` delimiters, missingkey=error), and unmarshalled with sigs.k8s.io/yaml again.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/template"
	"time"

	wyaml "github.com/rancher/wrangler/v3/pkg/yaml"
	kyaml "sigs.k8s.io/yaml"
)

const (
	clusterLabelPrefix        = "global.fleet.clusterLabels."
	maxTemplateRecursionDepth = 50
	fleetLabelPrefix          = "fleet.cattle.io/"
	managementLabelPrefix     = "management.cattle.io/"
)

// Fleet's controller (and agent) run in bci-nano containers without TZ, where time.Local is UTC.
// sprig's date functions (date, toDate, htmlDate, unixEpoch of a parsed date, dateInZone "Local")
// read time.Local: without this, the values of a plan would depend on the timezone of the machine
// running `pulumi up` (`${ date "2006-01-02" 0 }` is 1969-12-31 in America/New_York, 1970-01-01 in
// Fleet). Process-wide, which is also what Fleet's agent sees when Helm renders a chart.
func init() { time.Local = time.UTC }

// processValuesEncoded: a values job's result, JSON-encoded. A result that is exactly a rendered text's
// values (no templateValues merged in) is encoded once per text and shared by the jobs rendering it.
func processValuesEncoded(job ValuesJob, helm *HelmValuesInput, cluster *ClusterInput) json.RawMessage {
	result, shared := processValues(job, helm, cluster)
	if shared == nil {
		return encodeResult(result)
	}
	shared.encodeOnce.Do(func() { shared.encoded = encodeResult(result) })
	return shared.encoded
}

func encodeResult(result ValuesResult) json.RawMessage {
	encoded, err := json.Marshal(result)
	if err != nil {
		encoded, _ = json.Marshal(ValuesResult{Error: fmt.Sprintf("encoding the values: %v", err)})
	}
	return encoded
}

// processValues: Fleet's processing of one job; shared is set when the result is exactly the values (or
// the error) of a cached rendered text.
func processValues(job ValuesJob, helm *HelmValuesInput, cluster *ClusterInput) (result ValuesResult, shared *renderedText) {
	defer func() {
		if r := recover(); r != nil {
			result, shared = ValuesResult{Error: fmt.Sprintf("internal error templating helm values: %v", r)}, nil
		}
	}()
	if cluster == nil || helm == nil {
		return ValuesResult{Error: fmt.Sprintf("unknown cluster %q or helm options %q in the request", job.Cluster, job.Helm)}, nil
	}
	view := cluster.view()
	clusterLabels := view.labels
	if len(clusterLabels) == 0 {
		return ValuesResult{}, nil
	}
	if helm.TemplateValues == nil && len(helm.Values) == 0 {
		return ValuesResult{}, nil
	}
	substituted, err := substitutedValues(job.Helm, helm, clusterLabels)
	if err != nil {
		return ValuesResult{Error: err.Error()}, nil
	}
	if helm.DisablePreProcess {
		return ValuesResult{Values: substituted.values, Changed: true}, nil
	}
	// A template that can modify .ClusterValues gets its own copy: sprig's set, unset, merge and
	// mergeOverwrite modify the map they are given, and a cluster is shared by the jobs of a batch (run
	// concurrently). Fleet templates each (bundle, cluster) with its own copy of the Cluster object,
	// so `${ $_ := set .ClusterValues "x" 1 }` in one bundle is not seen by another.
	templateValues := cluster.TemplateValues
	if substituted.mutates {
		templateValues, _ = deepCopyJSON(templateValues).(map[string]any)
	}
	if templateValues == nil {
		templateValues = map[string]any{}
	}
	labelsDict, annotationsDict := view.labelsDict, view.annotationsDict
	if substituted.mutates {
		labelsDict, annotationsDict = toDict(clusterLabels), toDict(view.annotations)
	}
	context := map[string]any{
		"ClusterNamespace":   cluster.Namespace,
		"ClusterName":        cluster.Name,
		"ClusterLabels":      labelsDict,
		"ClusterAnnotations": annotationsDict,
		"ClusterValues":      templateValues,
	}
	rendered := templateValuesText(substituted, context)
	values := rendered.values
	if rendered.err != nil {
		return ValuesResult{Error: rendered.err.Error()}, rendered
	}
	if len(helm.TemplateValues) > 0 {
		templated, err := templateValuesEntries(helm.TemplateValues, context)
		if err != nil {
			return ValuesResult{Error: err.Error()}, nil
		}
		if values == nil {
			// The values text rendered to no mapping (e.g. a templated key printing "#"): Fleet copies
			// templateValues into that nil map and its controller panics, so the bundle fails there.
			return ValuesResult{Error: "helm values rendered to null, templateValues cannot be merged into them " +
				"(Fleet's controller fails the same way: assignment to entry in nil map)"}, nil
		}
		// The rendered map may be shared with other jobs (see renderedValues): copy before writing.
		merged := make(map[string]any, len(values)+len(templated))
		maps.Copy(merged, values)
		maps.Copy(merged, templated)
		return ValuesResult{Values: merged, Changed: true}, nil
	} else if values == nil {
		return ValuesResult{Values: map[string]any{}, Changed: true}, nil
	}
	return ValuesResult{Values: values, Changed: true}, rendered
}

// clusterView: what templates see of a cluster, computed once per cluster (a batch has one job per
// (options, cluster) pair, tens of thousands for a large fleet): labels and annotations cleaned with
// wrangler as Fleet does, fleet.cattle.io/ and management.cattle.io/ labels put back, and their
// dicts. The dicts are shared by the cluster's jobs unless a template may modify them (mutates).
type clusterView struct {
	labels, annotations         map[string]string
	labelsDict, annotationsDict map[string]any
}

func (c *ClusterInput) view() *clusterView {
	c.viewOnce.Do(func() {
		labels := wyaml.CleanAnnotationsForExport(c.Labels)
		for k, v := range c.Labels {
			if strings.HasPrefix(k, fleetLabelPrefix) || strings.HasPrefix(k, managementLabelPrefix) {
				labels[k] = v
			}
		}
		annotations := wyaml.CleanAnnotationsForExport(c.Annotations)
		c.cached = &clusterView{labels: labels, annotations: annotations, labelsDict: toDict(labels), annotationsDict: toDict(annotations)}
	})
	return c.cached
}

// substituted: a helm values map after label substitution, and its YAML text (the template).
type substituted struct {
	values map[string]any
	text   string
	err    error
	// mutates: the values text or a templateValues entry may modify the maps of its context.
	mutates bool
}

// Label substitution depends only on the values and on the labels they reference, so the result (and
// its marshalled text) is computed once per (helm options, referenced label values), not per cluster.
var substitutedCache sync.Map

func substitutedValues(helmKey string, helm *HelmValuesInput, labels map[string]string) (*substituted, error) {
	refs := labelReferencesOf(helmKey, helm)
	var key strings.Builder
	key.WriteString(helmKey)
	for _, r := range refs {
		v, ok := labels[r]
		key.WriteString("\x00")
		if ok {
			key.WriteString("1")
		}
		key.WriteString("\x00")
		key.WriteString(v)
	}
	if s, ok := substitutedCache.Load(key.String()); ok {
		return s.(*substituted), s.(*substituted).err
	}
	s := &substituted{}
	s.values, s.err = jsonCopy(helm.Values)
	if s.err == nil {
		if s.values == nil {
			s.values = map[string]any{}
		}
		s.err = substituteLabels(s.values, labels, 0)
	}
	if s.err == nil {
		var data []byte
		if data, s.err = kyaml.Marshal(s.values); s.err != nil {
			s.err = fmt.Errorf("failed to marshal helm values section into a template: %w", s.err)
		}
		s.text = string(data)
		s.mutates = mayMutate(s.text)
		for _, t := range helm.TemplateValues {
			s.mutates = s.mutates || mayMutate(t)
		}
	}
	substitutedCache.Store(key.String(), s)
	return s, s.err
}

// The labels a helm options' values reference, by helm key: the same for every cluster's job.
var labelRefsCache sync.Map

func labelReferencesOf(helmKey string, helm *HelmValuesInput) []string {
	if refs, ok := labelRefsCache.Load(helmKey); ok {
		return refs.([]string)
	}
	refs := labelReferences(helm.Values, nil)
	labelRefsCache.Store(helmKey, refs)
	return refs
}

// labelReferences: the labels named by "global.fleet.clusterLabels.<label>" strings where Fleet
// substitutes them (map values, maps inside lists), sorted.
func labelReferences(values map[string]any, into []string) []string {
	for _, val := range values {
		switch v := val.(type) {
		case string:
			if strings.HasPrefix(v, clusterLabelPrefix) {
				into = append(into, strings.TrimPrefix(v, clusterLabelPrefix))
			}
		case map[string]any:
			into = labelReferences(v, into)
		case []any:
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					into = labelReferences(m, into)
				}
			}
		}
	}
	sort.Strings(into)
	return slices.Compact(into)
}

func jsonCopy(in map[string]any) (map[string]any, error) {
	if in == nil {
		return nil, nil
	}
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(data, &out)
}

// mayMutate: whether a template can call a sprig function that modifies a map it is given (set,
// unset, merge, mergeOverwrite, mustMerge, mustMergeOverwrite). A template calls functions by name
// only, so a text without "set" or "merge" cannot; any text with them counts (conservative).
func mayMutate(text string) bool {
	return strings.Contains(text, "set") || strings.Contains(text, "merge")
}

// deepCopyJSON copies maps and lists as encoding/json decodes them; other values are immutable.
func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyJSON(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopyJSON(e)
		}
		return l
	default:
		return v
	}
}

func toDict(values map[string]string) map[string]any {
	dict := make(map[string]any, len(values))
	for k, v := range values {
		dict[k] = v
	}
	return dict
}

// substituteLabels replaces "global.fleet.clusterLabels.<label>" strings by the label's value
// ("" when the cluster lacks it), in maps and in maps inside lists, as Fleet does.
func substituteLabels(values map[string]any, labels map[string]string, depth int) error {
	if depth > maxTemplateRecursionDepth {
		return fmt.Errorf("maximum recursion depth of %v exceeded for cluster label prefix processing, too many nested values", maxTemplateRecursionDepth)
	}
	for key, val := range values {
		if s, ok := val.(string); ok && strings.HasPrefix(s, clusterLabelPrefix) {
			values[key] = labels[strings.TrimPrefix(s, clusterLabelPrefix)]
		}
		switch v := val.(type) {
		case map[string]any:
			if err := substituteLabels(v, labels, depth+1); err != nil {
				return err
			}
		case []any:
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					if err := substituteLabels(m, labels, depth+1); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// Parsed templates by text: many clusters share a values text, and a parsed template may be
// executed concurrently. A parse error is cached too.
var parsedTemplates sync.Map

type parsedTemplate struct {
	tmpl *template.Template
	err  error
}

func newValuesTemplate(text string) (*template.Template, error) {
	if p, ok := parsedTemplates.Load(text); ok {
		return p.(parsedTemplate).tmpl, p.(parsedTemplate).err
	}
	tmpl, err := template.New("values").Funcs(funcMap).Option("missingkey=error").Delims("${", "}").Parse(text)
	parsedTemplates.Store(text, parsedTemplate{tmpl, err})
	return tmpl, err
}

// Rendered values by rendered text: clusters whose templates print the same text share one parse.
// Callers must not modify the map they get (processValues copies before merging templateValues).
var renderedValues sync.Map

type renderedText struct {
	values map[string]any
	err    error
	// encoded: the ValuesResult of the jobs whose result is exactly these values (or this error).
	encodeOnce sync.Once
	encoded    json.RawMessage
}

func templateValuesText(s *substituted, context map[string]any) *renderedText {
	tmpl, err := newValuesTemplate(s.text)
	if err != nil {
		return &renderedText{err: fmt.Errorf("failed to parse helm values template: %w", err)}
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, context); err != nil {
		return &renderedText{err: fmt.Errorf("failed to render helm values template: %w", err)}
	}
	if r, ok := renderedValues.Load(b.String()); ok {
		return r.(*renderedText)
	}
	r := &renderedText{}
	if err := kyaml.Unmarshal(b.Bytes(), &r.values); err != nil {
		r.err = fmt.Errorf("failed to interpret rendered template as helm values: %#v, %w", r.values, err)
	}
	actual, _ := renderedValues.LoadOrStore(b.String(), r)
	return actual.(*renderedText)
}

func templateValuesEntries(entries map[string]string, context map[string]any) (map[string]any, error) {
	rendered := make(map[string]any, len(entries))
	for k, v := range entries {
		tmpl, err := newValuesTemplate(v)
		if err != nil {
			return nil, fmt.Errorf("templateValues.%s: failed to parse helm values template: %w", k, err)
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, context); err != nil {
			return nil, fmt.Errorf("templateValues.%s: failed to render helm values template: %w", k, err)
		}
		var value any
		if err := kyaml.Unmarshal(b.Bytes(), &value); err != nil {
			return nil, fmt.Errorf("templateValues.%s: failed to interpret rendered template as helm values: %s, %w", k, b.String(), err)
		}
		rendered[k] = value
	}
	return rendered, nil
}
