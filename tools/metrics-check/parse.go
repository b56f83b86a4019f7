package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Family is one metric family as the parser read it.
type Family struct {
	Name    string   `json:"name"`
	Help    string   `json:"help"`
	Type    string   `json:"type"`
	Samples []Sample `json:"samples"`
}

// Sample is one series of a gauge, counter or untyped family (what pulumi-fleet writes).
type Sample struct {
	Labels map[string]string `json:"labels"`
	// Value as text: JSON has no NaN or infinities.
	Value string `json:"value"`
}

// Parse reads a text exposition and refuses what the collectors that read it would refuse.
func Parse(in io.Reader) ([]Family, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	byName, err := parser.TextToMetricFamilies(in)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]Family, 0, len(names))
	for _, name := range names {
		mf := byName[name]
		f := Family{Name: name, Help: mf.GetHelp(), Type: strings.ToLower(mf.GetType().String())}
		seen := map[string]bool{}
		for _, m := range mf.GetMetric() {
			if m.TimestampMs != nil {
				return nil, fmt.Errorf("%s has a client-side timestamp, which node_exporter's textfile collector refuses", name)
			}
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			id := seriesID(m.GetLabel())
			if seen[id] {
				return nil, fmt.Errorf("%s{%s} is given twice", name, id)
			}
			seen[id] = true
			v, err := valueOf(mf.GetType(), m)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			f.Samples = append(f.Samples, Sample{Labels: labels, Value: formatValue(v)})
		}
		out = append(out, f)
	}
	return out, nil
}

func seriesID(labels []*dto.LabelPair) string {
	parts := make([]string, 0, len(labels))
	for _, l := range labels {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func valueOf(t dto.MetricType, m *dto.Metric) (float64, error) {
	switch t {
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), nil
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), nil
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), nil
	default:
		return 0, fmt.Errorf("type %s is not one pulumi-fleet writes", t)
	}
}

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return fmt.Sprintf("%v", v)
}
