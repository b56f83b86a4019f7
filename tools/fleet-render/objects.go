package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kyaml "sigs.k8s.io/yaml"
)

// splitDocuments splits a YAML stream into its documents (the reader Kubernetes and Fleet use).
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(stripDocMarker(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
	return docs
}

func stripDocMarker(doc []byte) []byte {
	t := bytes.TrimSpace(doc)
	if bytes.HasPrefix(t, []byte("---")) && (len(t) == 3 || bytes.ContainsAny(t[3:4], " \t\r\n")) {
		return t[3:]
	}
	return t
}

// toObjects reads Kubernetes objects from a YAML stream as Fleet does (wrangler's yaml.ToObjects):
// null documents skipped, a List's items flattened, a document that is not a mapping or has no kind
// an error. Documents are converted with sigs.k8s.io/yaml, which also reads the flow-style documents
// Helm v4 emits for toJson output (Fleet normalises those first for the same reason).
func toObjects(data []byte) ([]map[string]any, error) {
	if err := checkYAMLExpansion(data); err != nil {
		return nil, err
	}
	var out []map[string]any
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		js, err := kyaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		check := map[string]any{}
		if err := json.Unmarshal(js, &check); err != nil {
			return nil, err
		}
		if len(check) == 0 {
			continue
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
		if err != nil {
			return nil, err
		}
		switch o := obj.(type) {
		case *unstructured.UnstructuredList:
			for _, item := range o.Items {
				out = append(out, item.Object)
			}
		case *unstructured.Unstructured:
			out = append(out, o.Object)
		}
	}
	return out, nil
}

// rawYAMLObjects: the objects of the chart's raw-yaml/ files, as Fleet's agent adds them after
// post-rendering. As in Fleet, a file with a document that has no kind is skipped whole, and objects
// without apiVersion or kind are left out; here each skip is also a warning.
func rawYAMLObjects(files []rawFile, warn func(string)) ([]map[string]any, error) {
	var out []map[string]any
	for _, f := range files {
		objs, err := toObjects(f.data)
		if err != nil {
			if runtime.IsMissingKind(err) {
				warn(fmt.Sprintf("%s: skipped, as Fleet does: a document has no kind", f.name))
				continue
			}
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		for _, o := range objs {
			u := unstructured.Unstructured{Object: o}
			if u.GetAPIVersion() == "" || u.GetKind() == "" {
				warn(fmt.Sprintf("%s: an object without apiVersion or kind is skipped, as Fleet does", f.name))
				continue
			}
			out = append(out, o)
		}
	}
	return out, nil
}

type rawFile struct {
	name string
	data []byte
}

func objectsToYAML(objs []map[string]any) ([]byte, error) {
	var b bytes.Buffer
	for _, o := range objs {
		data, err := kyaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes(), nil
}
