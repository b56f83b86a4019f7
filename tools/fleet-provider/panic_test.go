package main

import (
	"strings"
	"testing"
)

// A panic while applying one pair is that pair's ErrApplied, with what it had before; the process,
// which applies every other pair of the stack, goes on.
func TestPairOwnPanic(t *testing.T) {
	prev := &Outputs{Status: Status{State: StateReady, Inventory: []InventoryID{{Kind: "ConfigMap", Namespace: "apps", Name: "kept"}}}}
	st := pairOwnPanic(prev, func() Status { panic("unexpected object") })
	if st.State != StateErrApplied {
		t.Fatalf("state %q, want %q", st.State, StateErrApplied)
	}
	if len(st.Messages) != 1 || !strings.Contains(st.Messages[0], "unexpected object") {
		t.Fatalf("messages %q do not name the panic", st.Messages)
	}
	if len(st.Inventory) != 1 || st.Inventory[0].Name != "kept" {
		t.Fatalf("inventory %v: what the pair had before must be kept (a prune must never lose it)", st.Inventory)
	}
	if st := pairOwnPanic(nil, func() Status { return Status{State: StateReady} }); st.State != StateReady {
		t.Fatalf("no panic: state %q, want the apply's own", st.State)
	}
}

// A panic in a delete or a refresh is that resource's error.
func TestErrorOnPanic(t *testing.T) {
	run := func() (err error) {
		defer errorOnPanic("urn:x", &err)
		panic("boom")
	}
	if err := run(); err == nil || !strings.Contains(err.Error(), "urn:x") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("error %v, want one naming the resource and the panic", err)
	}
}
