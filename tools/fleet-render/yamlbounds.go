package main

// YAML alias expansion, bounded wherever GitRepo content becomes YAML data: a few hundred bytes of
// nested anchors (a "billion laughs") expand to gigabytes in the decoders Helm, kustomize and
// sigs.k8s.io/yaml use. Each text is first parsed as nodes (aliases stay references) and its expanded
// size counted without expanding it; over the bound it is an error naming the bound, before any
// decoder sees it.

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// maxExpandedNodes: how many nodes the aliases of a YAML text may add when expanded, all its documents
// together. The nodes written out in the text are bounded by its size (the file and output limits):
// a large text without aliases (a bundle of CRDs) is not an alias bomb, whatever its node count.
var maxExpandedNodes = 1_000_000

// checkYAMLExpansion returns an error when a YAML text's aliases would add more than maxExpandedNodes
// nodes. Text that is not YAML (a Helm template before rendering) is not this check's business: the
// decoder that reads it later reports it.
func checkYAMLExpansion(data []byte) error {
	if !bytes.ContainsRune(data, '*') || !bytes.ContainsRune(data, '&') {
		return nil // no alias can be used without an anchor and a reference
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	sizes := map[*yaml.Node]int{}
	added := 0
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return nil // the end, or not YAML
		}
		added = aliasesAdd(&doc, sizes, added, 0)
		if added > maxExpandedNodes {
			return fmt.Errorf("YAML aliases expand to more than %d nodes (an alias bomb?); the limit bounds what one file may expand to", maxExpandedNodes)
		}
	}
}

// aliasesAdd walks the nodes as the text writes them and adds to added what each alias adds when
// expanded (its anchor's expanded size, less the alias node itself), stopping once past the bound.
// Only aliases are counted: the nodes written out, however many, neither count nor hide an alias
// written after them.
func aliasesAdd(n *yaml.Node, sizes map[*yaml.Node]int, added, depth int) int {
	if n == nil || depth > 10_000 || added > maxExpandedNodes {
		return added
	}
	if n.Kind == yaml.AliasNode {
		size := expandedSize(n.Alias, sizes, 0)
		if size > maxExpandedNodes {
			return maxExpandedNodes + 1 // the count stopped there: one alias over the bound, however far over
		}
		return added + size - 1
	}
	for _, c := range n.Content {
		if added = aliasesAdd(c, sizes, added, depth+1); added > maxExpandedNodes {
			break
		}
	}
	return added
}

// expandedSize counts a node as the decoders would expand it, each distinct node once (memoized), so
// the count itself costs the size of the text, not of the expansion. Past maxExpandedNodes it stops:
// one alias of that size is over the bound already.
func expandedSize(n *yaml.Node, sizes map[*yaml.Node]int, depth int) int {
	if n == nil || depth > 10_000 {
		return 1
	}
	if s, ok := sizes[n]; ok {
		return s
	}
	sizes[n] = maxExpandedNodes + 1 // a cycle through an alias counts as too large
	size := 1
	if n.Kind == yaml.AliasNode {
		size = expandedSize(n.Alias, sizes, depth+1)
	}
	for _, c := range n.Content {
		size += expandedSize(c, sizes, depth+1)
		if size > maxExpandedNodes {
			break
		}
	}
	sizes[n] = size
	return size
}

// maxResultDepth: how deeply a job's result may nest (objects and arrays). The caller's JavaScript
// walks results recursively (hashing, merging, printing YAML); a template that emits 9,000 nested
// lists would otherwise end it with a stack overflow. Real manifests, CRD schemas included, stay far
// below this.
const maxResultDepth = 512

// checkJSONDepth scans encoded JSON (strings skipped) and returns an error past maxResultDepth.
func checkJSONDepth(data []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > maxResultDepth {
				return fmt.Errorf("the result nests objects and lists more than %d levels deep; the limit bounds what one job may return", maxResultDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}
