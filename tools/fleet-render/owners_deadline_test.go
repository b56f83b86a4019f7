package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeCluster serves discovery (ConfigMaps only) and answers object reads with an empty list, or, when
// hang, never (until the client gives up): a cluster made slow by one GitRepo's many objects.
func fakeCluster(t *testing.T, hang bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list"]}]}`)
		default:
			if hang {
				<-r.Context().Done()
				return
			}
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}
	}))
	t.Cleanup(srv.Close)
	return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: '%s'}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n", srv.URL)
}

// One GitRepo's read that its deadline ends fails alone, saying so; another job of the same batch answers.
func TestOwnersJobDeadlineIsTheJobsOwn(t *testing.T) {
	refs := []ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}}
	req := &Request{Owners: []OwnersJob{
		{ID: "c\x00attacker", Kubeconfig: fakeCluster(t, true), Objects: refs, TimeoutSeconds: 1},
		{ID: "c\x00victim", Kubeconfig: fakeCluster(t, false), Objects: refs, TimeoutSeconds: 1},
	}}
	start := time.Now()
	resp := run(req, nil)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the batch took %s: the job's own 1 s deadline was not applied", took)
	}
	if e := resp.Owners["c\x00attacker"].Error; !strings.Contains(e, "did not finish within 1s") {
		t.Fatalf("the slow read's error does not name its deadline: %q", e)
	}
	if v := resp.Owners["c\x00victim"]; v.Error != "" || len(v.Objects) != 1 || v.Objects[0] != nil {
		t.Fatalf("the other GitRepo's read must answer (absent object): %+v", v)
	}
}

// A lookup job cut short by its deadline is an error, never answers that read as "absent".
func TestLookupJobDeadlineFailsTheJob(t *testing.T) {
	r := readLookups(LookupJob{ID: "c", Kubeconfig: fakeCluster(t, true), Keys: []LookupKey{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}}, TimeoutSeconds: 1})
	if !strings.Contains(r.Error, "did not finish within 1s") {
		t.Fatalf("expected the deadline's error, got %+v", r)
	}
}

// A read that panics answers with its error; the batch and its other jobs go on.
func TestReadClustersRecoversAJobsPanic(t *testing.T) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	into := map[string]OwnersResult{}
	read := func(j OwnersJob) OwnersResult {
		if j.ID == "bad" {
			panic("boom")
		}
		return OwnersResult{Objects: []*LiveObject{nil}}
	}
	readClusters(&wg, &mu, []OwnersJob{{ID: "bad"}, {ID: "good"}}, func(j OwnersJob) string { return j.ID }, read, func(e string) OwnersResult { return OwnersResult{Error: e} }, into)
	wg.Wait()
	if !strings.Contains(into["bad"].Error, "boom") || into["good"].Error != "" || len(into["good"].Objects) != 1 {
		t.Fatalf("got %+v", into)
	}
}
