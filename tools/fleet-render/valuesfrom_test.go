package main

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func asJSON(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Fleet's order (getValues): the options' values first, then each input over it, later ones winning.
func TestValuesFromMergesOverValuesInOrder(t *testing.T) {
	values := map[string]any{"a": "values", "keep": "values", "nested": map[string]any{"x": 1.0, "w": "values"}, "list": []any{"v"}}
	got, err := withValuesFrom(values, []ValuesFromInput{
		{From: "configmap ns/cm key values.yaml", Data: b64("a: configmap\nnested:\n  w: configmap\nlist: [c1, c2]\n")},
		{From: "secret ns/s key values.yaml", Data: b64("a: secret\nnested: {z: yes}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Lists are replaced, maps merged, YAML 1.1 as Fleet decodes it (yes is true).
	want := `{"a":"secret","keep":"values","list":["c1","c2"],"nested":{"w":"configmap","x":1,"z":true}}`
	if s := asJSON(t, got); s != want {
		t.Fatalf("got %s, want %s", s, want)
	}
}

// A scalar over a map and a map over a scalar both replace (Fleet's mergeValues).
func TestValuesFromReplacesAcrossKinds(t *testing.T) {
	got, err := withValuesFrom(map[string]any{"m": map[string]any{"a": 1.0}, "s": "x"}, []ValuesFromInput{{From: "c", Data: b64("m: flat\ns: {b: 2}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if s := asJSON(t, got); s != `{"m":"flat","s":{"b":2}}` {
		t.Fatalf("got %s", s)
	}
}

// A null document gives nothing; only the first document counts; a key `y` is "true" (YAML 1.1).
func TestValuesFromNullAndDocuments(t *testing.T) {
	got, err := withValuesFrom(nil, []ValuesFromInput{{From: "b", Data: b64("null\n")}, {From: "c", Data: b64("---\nk: 1\ny: 2\n---\nk: 2\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if s := asJSON(t, got); s != `{"k":1,"true":2}` {
		t.Fatalf("got %s", s)
	}
}

// An empty value is the decoder's EOF, as on Fleet's agent.
func TestValuesFromEmpty(t *testing.T) {
	_, err := withValuesFrom(nil, []ValuesFromInput{{From: "configmap ns/cm key values.yaml", Data: b64("")}})
	if err == nil || err.Error() != "helm.valuesFrom configmap ns/cm key values.yaml: EOF (the value is empty)" {
		t.Fatalf("got %v", err)
	}
}

// A value that is not a mapping fails with the decoder's words (Fleet's), naming the reference.
func TestValuesFromNotAMapping(t *testing.T) {
	_, err := withValuesFrom(nil, []ValuesFromInput{{From: "configmap ns/cm key values.yaml", Data: b64("- a\n- b\n")}})
	if err == nil || !strings.HasPrefix(err.Error(), "helm.valuesFrom configmap ns/cm key values.yaml: ") || !strings.Contains(err.Error(), "cannot unmarshal array") {
		t.Fatalf("got %v", err)
	}
}

func TestValuesFromAliasBomb(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := 0; i < 8; i++ {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = name
	}
	_, err := withValuesFrom(nil, []ValuesFromInput{{From: "secret ns/s key v", Data: b64(bomb)}})
	if err == nil || !strings.Contains(err.Error(), "alias bomb") {
		t.Fatalf("got %v", err)
	}
}
