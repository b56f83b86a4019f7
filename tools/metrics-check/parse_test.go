package main

import (
	"strings"
	"testing"
)

func TestParseReadsEscapedLabels(t *testing.T) {
	in := "# HELP a_b A help with a \\\\ backslash.\n# TYPE a_b gauge\na_b{x=\"q\\\"uote\\\\ and\\nline\"} 1\n"
	fs, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Type != "gauge" || fs[0].Samples[0].Labels["x"] != "q\"uote\\ and\nline" || fs[0].Samples[0].Value != "1" {
		t.Fatalf("got %+v", fs)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"unescaped quote":  "a{x=\"a\"b\"} 1\n",
		"bad name":         "a-b 1\n",
		"twice":            "# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n",
		"timestamp":        "a 1 1700000000000\n",
		"second TYPE line": "# TYPE a gauge\na 1\n# TYPE a gauge\n",
		"no value":         "a{x=\"1\"}\n",
	} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}
