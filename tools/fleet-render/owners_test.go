package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The crash journal's sweep deletes with the propagation the delete policy sends; it has none of its own.
func TestDeletePropagationIsTheReceivedOneOrRefused(t *testing.T) {
	for in, want := range map[string]metav1.DeletionPropagation{
		"background": metav1.DeletePropagationBackground, "foreground": metav1.DeletePropagationForeground, "orphan": metav1.DeletePropagationOrphan,
	} {
		if got, err := deletePropagation(in); err != nil || *got != want {
			t.Fatalf("%s: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "Background"} {
		if _, err := deletePropagation(in); err == nil {
			t.Fatalf("%q must be refused, not defaulted", in)
		}
	}
	if r := readOwners(OwnersJob{ID: "c", Kubeconfig: "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n", Delete: true}); !strings.Contains(r.Error, "propagation") {
		t.Fatal("a delete job without a propagation is refused before anything is read")
	}
}
