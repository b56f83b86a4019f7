package main

import (
	"fmt"
	"strings"
	"testing"
)

// A large text without aliases (a bundle of CRDs whose descriptions hold '*' and '&') is bounded by
// its size, not by the alias bound: it passes however many nodes it has.
func TestLargeTextWithoutAliasesPasses(t *testing.T) {
	defer func(n int) { maxExpandedNodes = n }(maxExpandedNodes)
	maxExpandedNodes = 1_000
	var b strings.Builder
	b.WriteString("kind: CustomResourceDefinition\ndescription: \"a * b && c\"\nproperties:\n")
	for i := 0; i < 2_000; i++ {
		fmt.Fprintf(&b, "  field%d: {type: string, description: \"matches * & more\"}\n", i)
	}
	if err := checkYAMLExpansion([]byte(b.String())); err != nil {
		t.Fatalf("a text without aliases was refused: %v", err)
	}
}

// An alias bomb is refused: nine levels of ten aliases each expand to a billion nodes.
func TestAliasBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	err := checkYAMLExpansion([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "alias bomb") {
		t.Fatalf("an alias bomb passed: %v", err)
	}
}

// What aliases add is counted across documents, while what the text writes out is not.
func TestAliasesAddedCountAcrossDocuments(t *testing.T) {
	defer func(n int) { maxExpandedNodes = n }(maxExpandedNodes)
	maxExpandedNodes = 100
	doc := "base: &b [1, 2, 3, 4, 5, 6, 7, 8, 9]\nuse: [*b, *b, *b]\n" // each alias adds the sequence's 10 nodes less itself
	one := checkYAMLExpansion([]byte(doc))
	if one != nil {
		t.Fatalf("one document adding 27 nodes was refused: %v", one)
	}
	many := checkYAMLExpansion([]byte(strings.Repeat("---\n"+doc, 5)))
	if many == nil {
		t.Fatal("five documents adding 135 nodes together passed a bound of 100")
	}
}
