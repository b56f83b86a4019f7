package main

// The work a file makes SOPS's stores do, bounded before they see it. The YAML store reads each
// document as nodes and expands every alias while building its tree, with no limit (yaml.v3's own
// alias check covers only decoding into Go values, which the store does for the first document
// alone): a 1 KB file with a fake `sops` block and nested anchors in its second document grew this
// process past 3 GiB. That one decoding into Go values compares each key of a mapping with every
// earlier one: a 2 MB file of 50,000 keys took 19 s. So each file is first parsed as nodes (aliases
// stay references; linear in the text) and counted: its nodes as expanded (memoized, so the count
// costs the size of the text, not of the expansion), the keys of its largest mapping and its depth.
// Over a budget the file is refused, naming the budget. A Secret the API server takes is far below.

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// maxExpandedNodes: how many nodes one file may hold, all documents together, aliases expanded.
var maxExpandedNodes = 200_000

// maxMappingKeys: how many keys one mapping may hold (the store's duplicate-key check is quadratic in it).
const maxMappingKeys = 10_000

// maxDepth: how deeply a file's collections may nest. The caller's JavaScript walks the decrypted
// objects recursively (hashing, copying, printing), as it does the renderer's results (fleet-render's
// maxResultDepth, the same bound); a Secret the API server takes is far shallower.
const maxDepth = 512

// checkYAMLBudget returns an error when a file is over either budget. JSON is YAML to this parser;
// text that does not parse is left to the store, which reports it.
func checkYAMLBudget(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	c := counter{sizes: map[*yaml.Node]int{}}
	total := 0
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return nil // the end, or not YAML
		}
		total += c.expandedSize(&doc, 0)
		if c.deepest > maxDepth {
			return fmt.Errorf("is not decrypted: its collections nest more than %d levels deep; the limit bounds what one file may make the runner walk", maxDepth)
		}
		if c.widest > maxMappingKeys {
			return fmt.Errorf("is not decrypted: a mapping in it has more than %d keys; the limit bounds the work one file may cause", maxMappingKeys)
		}
		if total > maxExpandedNodes {
			return fmt.Errorf("is not decrypted: it holds more than %d YAML nodes once its aliases are expanded (an alias bomb?); the limit bounds what one file may expand to", maxExpandedNodes)
		}
	}
}

type counter struct {
	sizes   map[*yaml.Node]int
	widest  int
	deepest int
}

// expandedSize counts a node as the store would expand it, each distinct node once.
func (c *counter) expandedSize(n *yaml.Node, depth int) int {
	if depth > c.deepest {
		c.deepest = depth
	}
	if n == nil || depth > maxDepth {
		return 1
	}
	if s, ok := c.sizes[n]; ok {
		return s
	}
	c.sizes[n] = maxExpandedNodes + 1 // a cycle through an alias counts as too large
	if n.Kind == yaml.MappingNode && len(n.Content)/2 > c.widest {
		c.widest = len(n.Content) / 2
	}
	size := 1
	if n.Kind == yaml.AliasNode {
		size = c.expandedSize(n.Alias, depth+1)
	}
	for _, ch := range n.Content {
		size += c.expandedSize(ch, depth+1)
		if size > maxExpandedNodes {
			break
		}
	}
	c.sizes[n] = size
	return size
}
