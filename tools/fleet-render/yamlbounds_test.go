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

// padding is a first key whose flow list writes out n nodes: with the count of what aliases add cut
// at the bound inside one subtree, such padding used to hide every alias written after it.
func padding(n int) string {
	return "pad: [" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]\n"
}

// A billion laughs after 1.5 million padding nodes is still an alias bomb: seven levels of ten
// aliases add ten million nodes, whatever the text wrote before them.
func TestPaddedAliasBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString(padding(1_500_000))
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 7; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	err := checkYAMLExpansion([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "alias bomb") {
		t.Fatalf("a billion laughs after padding passed: %v", err)
	}
}

// Many aliases of one mid-sized list after padding: 100,000 aliases of a 1,000-item list add about
// a hundred million nodes, each alias small, their sum over the bound.
func TestPaddedManyAliasesAreRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString(padding(1_500_000))
	fmt.Fprintf(&b, "a: &a [%s]\n", strings.TrimSuffix(strings.Repeat("1,", 1_000), ","))
	fmt.Fprintf(&b, "uses: [%s]\n", strings.TrimSuffix(strings.Repeat("*a,", 100_000), ","))
	err := checkYAMLExpansion([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "alias bomb") {
		t.Fatalf("100,000 aliases of a 1,000-item list after padding passed: %v", err)
	}
}

// Padding with a few small aliases is not an alias bomb: what the text writes out is not counted.
func TestPaddedFewAliasesPass(t *testing.T) {
	doc := padding(1_500_000) + "base: &b [1, 2, 3]\nuse: [*b, *b]\n"
	if err := checkYAMLExpansion([]byte(doc)); err != nil {
		t.Fatalf("a large text with two small aliases was refused: %v", err)
	}
}

// One alias of a list just over the bound is over it: the count, stopped at the bound, is not taken
// for the list's size less the alias.
func TestOneAliasOfAListOverTheBoundIsRefused(t *testing.T) {
	defer func(n int) { maxExpandedNodes = n }(maxExpandedNodes)
	maxExpandedNodes = 100
	doc := fmt.Sprintf("big: &big [%s]\nuse: *big\n", strings.TrimSuffix(strings.Repeat("1,", 150), ","))
	if err := checkYAMLExpansion([]byte(doc)); err == nil {
		t.Fatal("an alias adding 150 nodes passed a bound of 100")
	}
}
