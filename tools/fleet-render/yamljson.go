package main

// fleet.yaml and values files as Fleet reads them: sigs.k8s.io/yaml turns the YAML into JSON (YAML 1.1
// scalars: `yes`/`on`/`y` are true, `010` is 8, `1_000` is 1000; non-string keys become strings; only
// the first document) and Fleet's structs are filled from that JSON. A JavaScript YAML 1.2 parser reads
// `enabled: yes` as the string "yes": the values would silently differ.

import (
	kyaml "sigs.k8s.io/yaml"
)

func yamlToJSON(text string) YAMLResult {
	if err := checkYAMLExpansion([]byte(text)); err != nil {
		return YAMLResult{Error: err.Error()}
	}
	out, err := kyaml.YAMLToJSON([]byte(text))
	if err != nil {
		return YAMLResult{Error: err.Error()}
	}
	return YAMLResult{JSON: out}
}
