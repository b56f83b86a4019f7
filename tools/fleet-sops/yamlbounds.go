package main

// YAML alias expansion, bounded before SOPS's YAML store sees a file: the store reads each document as
// nodes and expands every alias while building its tree, with no limit (yaml.v3's own alias check
// covers only decoding into Go values, which the store does for the first document alone). A 1 KB
// file with a fake `sops` block and nested anchors in its second document grew this process past
// 3 GiB. Here each document's expanded size is counted on the nodes, memoized, so the count costs the
// size of the text, not of the expansion; over the bound the file is refused, naming it.

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// maxExpandedNodes: how many nodes a YAML file may expand to through its aliases, all documents
// together (as fleet-render bounds every YAML text of content). A file SOPS wrote has no aliases
// (its emitter writes the tree out); this bounds only hand-made ones.
var maxExpandedNodes = 1_000_000

// checkYAMLExpansion returns an error when a YAML text's aliases expand past maxExpandedNodes.
// Text that does not parse is left to the store, which reports it.
func checkYAMLExpansion(data []byte) error {
	if !bytes.ContainsRune(data, '*') || !bytes.ContainsRune(data, '&') {
		return nil // no alias can be used without an anchor and a reference
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	sizes := map[*yaml.Node]int{}
	total := 0
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return nil // the end, or not YAML
		}
		total += expandedSize(&doc, sizes, 0)
		if total > maxExpandedNodes {
			return fmt.Errorf("is not decrypted: its YAML aliases expand to more than %d nodes (an alias bomb?); the limit bounds what one file may expand to", maxExpandedNodes)
		}
	}
}

// expandedSize counts a node as the store would expand it, each distinct node once.
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
