package main

// helm.valuesFrom, merged as Fleet's agent merges it before an install (rancher/fleet v0.16.0,
// internal/helmdeployer/install.go, (*Helm).getValues): the options' values (fleet.yaml values with its
// valuesFiles merged over them, then templated by the controller) first, then each valuesFrom entry in
// order, its configMapKeyRef and then its secretKeyRef, each decoded with apimachinery's
// YAMLToJSONDecoder (the first document, into a map) and merged over what came before with Fleet's
// mergeValues: what valuesFrom gives wins. The objects are read outside the sandbox with the deploying
// identity (core/render/values-from.ts); the job brings the referenced key's bytes, never a path.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// withValuesFrom returns the values Fleet's agent installs with: values, then each input merged over it.
func withValuesFrom(values map[string]any, inputs []ValuesFromInput) (map[string]any, error) {
	if values == nil {
		values = map[string]any{}
	}
	for _, in := range inputs {
		data, err := base64.StdEncoding.DecodeString(in.Data)
		if err != nil {
			return nil, fmt.Errorf("helm.valuesFrom %s: %w", in.From, err)
		}
		if err := checkYAMLExpansion(data); err != nil {
			return nil, fmt.Errorf("helm.valuesFrom %s: %w", in.From, err)
		}
		// Fleet's valuesFromConfigMap / valuesFromSecret: a null document gives nothing to merge; an
		// empty value is the decoder's io.EOF, which fails Fleet's install too.
		var m map[string]any
		if err := yaml.NewYAMLToJSONDecoder(bytes.NewBuffer(data)).Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("helm.valuesFrom %s: %w (the value is empty)", in.From, err)
			}
			return nil, fmt.Errorf("helm.valuesFrom %s: %w", in.From, err)
		}
		if m != nil {
			values = mergeFleetValues(values, m)
		}
	}
	return values, nil
}

// mergeFleetValues is Fleet's mergeValues (adapted by Fleet from Helm's CLI): src wins; a map in both
// is merged; anything else in src replaces what dest has.
func mergeFleetValues(dest, src map[string]any) map[string]any {
	for k, v := range src {
		if _, exists := dest[k]; !exists {
			dest[k] = v
			continue
		}
		nextMap, ok := v.(map[string]any)
		if !ok {
			dest[k] = v
			continue
		}
		destMap, isMap := dest[k].(map[string]any)
		if !isMap {
			dest[k] = v
			continue
		}
		dest[k] = mergeFleetValues(destMap, nextMap)
	}
	return dest
}
